package doctor

import (
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// ManagerLeaseName is the manager's default --leader-election-id: the
// Lease its leader renews while it runs with --leader-elect.
const ManagerLeaseName = "backfill-manager"

// statusGrace is how long a new TFJob may go without a status before
// doctor blames the operator; the operator writes one within a second.
const statusGrace = 30 * time.Second

// checkCRD says whether the apiserver serves kubeflow.org/v1 tfjobs.
func checkCRD(served bool) Result {
	if served {
		return ok(CheckCRD, "the TFJob CRD (tfjobs.kubeflow.org) is installed and serves kubeflow.org/v1")
	}
	return Result{
		Check: CheckCRD, Status: StatusFail,
		Finding: "the apiserver serves no kubeflow.org/v1 tfjobs: the TFJob CRD is not installed (or not established yet)",
		Fix:     "kubectl apply --server-side -f deploy/crds/kubeflow.org_tfjobs.yaml, or install the Helm chart",
	}
}

// ManagerPodLabel and ManagerPodLabelValue select the manager's pods as
// the Helm chart and the kustomize tree label them.
const (
	ManagerPodLabel      = "app.kubernetes.io/name"
	ManagerPodLabelValue = "backfill"
)

// checkOperator tells whether a manager reconciles TFJobs. The evidence,
// strongest first: active jobs left without a status (the operator writes
// one within a second, so one older than statusGrace without it means no
// operator runs); the leader Lease, when the manager runs with
// --leader-elect; the manager's pods, when it runs in the cluster; and,
// for a manager elsewhere without leader election, the jobs' statuses.
func checkOperator(s *Snapshot, jobs []*kubeflowv1.TFJob) Result {
	now := s.Now
	fix := "start the manager (`backfill manager`), or find out why its pod does not run: kubectl get pods -A -l " + ManagerPodLabel + "=" + ManagerPodLabelValue + ", then kubectl logs of it"
	if r, bad := jobsWithoutStatus(jobs, now, fix); bad {
		return r
	}
	lease, fresh := freshestLease(s.Leases, now)
	pods, ready := managerPods(s)
	switch {
	case lease != nil && fresh:
		return ok(CheckOperator, fmt.Sprintf("the manager's leader %s renewed Lease %s/%s %s ago", holder(lease), lease.Namespace, lease.Name, age(now, renewTime(lease))))
	case ready != nil:
		return ok(CheckOperator, fmt.Sprintf("manager pod %s/%s is ready", ready.Namespace, ready.Name))
	case lease != nil:
		return Result{Check: CheckOperator, Status: StatusFail,
			Finding: fmt.Sprintf("Lease %s/%s expired: last renewed %s ago by %s, so no manager replica leads", lease.Namespace, lease.Name, age(now, renewTime(lease)), holder(lease)),
			Fix:     fix}
	case len(pods) > 0:
		return Result{Check: CheckOperator, Status: StatusFail,
			Finding: fmt.Sprintf("none of the %d manager pod(s) is ready (e.g. %s/%s, phase %s)", len(pods), pods[0].Namespace, pods[0].Name, pods[0].Status.Phase),
			Fix:     fix}
	case len(jobs) > 0:
		return ok(CheckOperator, fmt.Sprintf("every one of %d active TFJob(s) has a status from the operator (no Lease %s: the manager runs without --leader-elect)", len(jobs), ManagerLeaseName))
	}
	return Result{Check: CheckOperator, Status: StatusWarn,
		Finding: fmt.Sprintf("cannot tell whether the operator runs: no Lease %s in any namespace, no manager pod, and no active TFJob to judge by", ManagerLeaseName),
		Fix:     "run the manager with --leader-elect so that its Lease shows it, or " + fix}
}

// jobsWithoutStatus is a FAIL when active jobs have gone without a status
// for longer than statusGrace.
func jobsWithoutStatus(jobs []*kubeflowv1.TFJob, now time.Time, fix string) (Result, bool) {
	var unseen []string
	var oldest time.Time
	for _, j := range jobs {
		if len(j.Status.Conditions) > 0 || now.Sub(j.CreationTimestamp.Time) <= statusGrace {
			continue
		}
		unseen = append(unseen, j.Namespace+"/"+j.Name)
		if oldest.IsZero() || j.CreationTimestamp.Time.Before(oldest) {
			oldest = j.CreationTimestamp.Time
		}
	}
	if len(unseen) == 0 {
		return Result{}, false
	}
	return Result{Check: CheckOperator, Status: StatusFail,
		Finding: fmt.Sprintf("%d TFJob(s) have had no status for over %v (%s; the oldest created %s ago): no operator reconciles them", len(unseen), statusGrace, listNames(unseen), age(now, oldest)),
		Fix:     fix}, true
}

// managerPods are the live manager pods, and one that is ready, if any.
func managerPods(s *Snapshot) (pods []*corev1.Pod, ready *corev1.Pod) {
	for i := range s.Pods {
		p := &s.Pods[i]
		// The node agent's pods carry the manager's name label too.
		if p.Labels[ManagerPodLabel] != ManagerPodLabelValue || isNodeAgentPod(p) || isTFJobPod(p) || p.DeletionTimestamp != nil {
			continue
		}
		pods = append(pods, p)
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && ready == nil {
				ready = p
			}
		}
	}
	return pods, ready
}

// freshestLease is the most recently renewed lease, and whether it is
// still within its duration.
func freshestLease(leases []coordinationv1.Lease, now time.Time) (*coordinationv1.Lease, bool) {
	var best *coordinationv1.Lease
	for i := range leases {
		if best == nil || renewTime(&leases[i]).After(renewTime(best)) {
			best = &leases[i]
		}
	}
	if best == nil {
		return nil, false
	}
	duration := 15 * time.Second
	if best.Spec.LeaseDurationSeconds != nil {
		duration = time.Duration(*best.Spec.LeaseDurationSeconds) * time.Second
	}
	held := best.Spec.HolderIdentity != nil && *best.Spec.HolderIdentity != ""
	return best, held && now.Sub(renewTime(best)) <= duration
}

func renewTime(l *coordinationv1.Lease) time.Time {
	if l.Spec.RenewTime != nil {
		return l.Spec.RenewTime.Time
	}
	return l.CreationTimestamp.Time
}

func holder(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return "nobody"
	}
	return *l.Spec.HolderIdentity
}

// isTFJobPod is true for training pods, which may carry any label.
func isTFJobPod(p *corev1.Pod) bool {
	_, ok := colocation.ControllingTFJob(p)
	return ok
}
