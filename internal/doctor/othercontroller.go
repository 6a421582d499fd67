package doctor

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// otherController is how another TFJob controller shows in a cluster: the
// names, labels and image its own manifests give it.
type otherController struct {
	// what names it in findings.
	what string
	// deployment is its Deployment's name in its manifests.
	deployment string
	// podLabel=podLabelValue is on its pods (and its Deployment's template).
	podLabel, podLabelValue string
	// images are the last path segments of its image names.
	images []string
	// lease is its leader-election Lease, "" when it keeps none.
	lease string
	// onlyTFJobs: it runs no other kind of job, so it can simply go.
	onlyTFJobs bool
}

// TrainingOperatorLeaseName is the default --leader-election-id of
// Kubeflow's training-operator v1: its Lease, in its own namespace, when
// it runs with --leader-elect.
const TrainingOperatorLeaseName = "1ca428e5.training-operator.kubeflow.org"

// otherControllers are the TFJob controllers of Kubeflow: training-operator
// v1 (kubeflow/training-operator manifests: Deployment training-operator in
// namespace kubeflow, pods labelled control-plane=kubeflow-training-operator)
// and the tf-operator before it (Deployment tf-job-operator, pods labelled
// name=tf-job-operator; its leader lock is an Endpoints object, not a Lease).
var otherControllers = []otherController{
	{
		what: "Kubeflow training-operator", deployment: "training-operator",
		podLabel: "control-plane", podLabelValue: "kubeflow-training-operator",
		images: []string{"training-operator"}, lease: TrainingOperatorLeaseName,
	},
	{
		what: "Kubeflow tf-operator", deployment: "tf-job-operator",
		podLabel: "name", podLabelValue: "tf-job-operator",
		images: []string{"tf-operator", "tf_operator"}, onlyTFJobs: true,
	},
}

// checkOtherController finds another TFJob controller: two controllers
// reconciling the same TFJobs create, delete and restart the same pods and
// overwrite each other's status. The evidence: a Deployment of one that
// wants replicas, a running pod of one that no such Deployment explains,
// and a fresh leader Lease of one. A Deployment scaled to 0, or one whose
// --enable-scheme list leaves TFJob out, is named in the OK finding.
func checkOtherController(s *Snapshot) []Result {
	var results []Result
	var idle []string
	// accounted are the namespace/controller pairs already reported, or
	// known to run no TFJob controller: their pods and Lease say nothing new.
	accounted := map[string]bool{}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		kind := matchController(d.Name, d.Spec.Template.Labels, d.Spec.Template.Spec.Containers)
		if kind == nil {
			continue
		}
		ref := "Deployment " + d.Namespace + "/" + d.Name
		if note, noTFJobs := idleDeployment(d); note != "" {
			idle = append(idle, ref+" of "+kind.what+" "+note)
			key := d.Namespace + "/" + kind.what
			accounted[key] = accounted[key] || noTFJobs
			continue
		}
		accounted[d.Namespace+"/"+kind.what] = true
		results = append(results, Result{
			Check: CheckOtherController, Status: StatusFail, Object: "deployment " + d.Namespace + "/" + d.Name,
			Finding: fmt.Sprintf("%s runs beside backfill: %s wants %d replica(s), %d ready%s; it reconciles TFJobs too, so the two controllers fight over every TFJob's pods and status%s",
				kind.what, ref, desiredReplicas(d), d.Status.ReadyReplicas, podsOf(s, d), leaseNote(s, kind, d.Namespace)),
			Fix: handOverFix(kind, d.Namespace, d.Name),
		})
	}
	results = append(results, strayPods(s, accounted)...)
	results = append(results, strayLeases(s, accounted)...)
	if len(results) > 0 {
		return results
	}
	finding := "no other TFJob controller: no Deployment, pod or leader Lease of Kubeflow's training-operator or tf-operator runs"
	if len(idle) > 0 {
		finding += " (" + strings.Join(idle, "; ") + ")"
	}
	return []Result{ok(CheckOtherController, finding)}
}

// matchController is the other controller a workload is, by its labels,
// name or images; nil for anything else.
func matchController(name string, podLabels map[string]string, containers []corev1.Container) *otherController {
	for i := range otherControllers {
		k := &otherControllers[i]
		if name == k.deployment || podLabels[k.podLabel] == k.podLabelValue {
			return k
		}
		for _, c := range containers {
			for _, image := range k.images {
				if imageName(c.Image) == image {
					return k
				}
			}
		}
	}
	return nil
}

// imageName is the last path segment of an image reference, without tag
// or digest: "kubeflow/training-operator:v1-5170a36" is training-operator.
func imageName(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		ref = ref[i+1:]
	}
	ref, _, _ = strings.Cut(ref, ":")
	return ref
}

// idleDeployment says why a Deployment of another controller does not
// fight backfill, or "" when it does; noTFJobs when it runs without a
// TFJob controller (rather than not at all).
func idleDeployment(d *appsv1.Deployment) (note string, noTFJobs bool) {
	if schemes, set := enabledSchemes(d.Spec.Template.Spec.Containers); set && !containsFold(schemes, "tfjob") {
		return "runs with --enable-scheme=" + strings.Join(schemes, ",") + ": no TFJob controller", true
	}
	if desiredReplicas(d) == 0 {
		return "is scaled to 0", false
	}
	return "", false
}

func desiredReplicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// enabledSchemes are the job kinds the training-operator's --enable-scheme
// flags name; set is false when none is given, and it runs them all.
func enabledSchemes(containers []corev1.Container) (schemes []string, set bool) {
	for _, c := range containers {
		args := append(append([]string{}, c.Command...), c.Args...)
		for i := 0; i < len(args); i++ {
			flag := strings.TrimLeft(args[i], "-")
			if flag == args[i] {
				continue
			}
			name, value, hasValue := strings.Cut(flag, "=")
			if name != "enable-scheme" {
				continue
			}
			if !hasValue && i+1 < len(args) {
				i++
				value = args[i]
			}
			set = true
			schemes = append(schemes, value)
		}
	}
	return schemes, set
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// podsOf names the running pods of a Deployment, for its finding.
func podsOf(s *Snapshot, d *appsv1.Deployment) string {
	var names []string
	for i := range s.Pods {
		if p := &s.Pods[i]; ownedBy(p, d) && podRuns(p) {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (running pod(s) " + listNames(names) + ")"
}

// ownedBy says the pod is one of the Deployment's, by its selector.
func ownedBy(p *corev1.Pod, d *appsv1.Deployment) bool {
	if p.Namespace != d.Namespace || d.Spec.Selector == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	return err == nil && !sel.Empty() && sel.Matches(labels.Set(p.Labels))
}

func podRuns(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && (p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending && p.Spec.NodeName != "")
}

// strayPods are running pods of another controller that no reported
// Deployment accounts for (started by hand, or by another kind of owner).
func strayPods(s *Snapshot, accounted map[string]bool) []Result {
	var out []Result
	for i := range s.Pods {
		p := &s.Pods[i]
		if isTFJobPod(p) || !podRuns(p) {
			continue
		}
		kind := matchController("", p.Labels, p.Spec.Containers)
		if kind == nil || accounted[p.Namespace+"/"+kind.what] {
			continue
		}
		if schemes, set := enabledSchemes(p.Spec.Containers); set && !containsFold(schemes, "tfjob") {
			continue
		}
		out = append(out, Result{
			Check: CheckOtherController, Status: StatusFail, Object: "pod " + p.Namespace + "/" + p.Name,
			Finding: fmt.Sprintf("%s runs beside backfill: pod %s/%s (phase %s, image %s) reconciles TFJobs too, so the two controllers fight over every TFJob's pods and status%s",
				kind.what, p.Namespace, p.Name, p.Status.Phase, p.Spec.Containers[0].Image, leaseNote(s, kind, p.Namespace)),
			Fix: fmt.Sprintf("stop it: find its owner with kubectl -n %s get pod %s -o jsonpath='{.metadata.ownerReferences}' and delete that (or the pod itself, kubectl -n %s delete pod %s, when nothing owns it); see docs/migration.md",
				p.Namespace, p.Name, p.Namespace, p.Name),
		})
		accounted[p.Namespace+"/"+kind.what] = true
	}
	return out
}

// strayLeases are fresh leader Leases of another controller whose pods
// were not found: a leader runs outside this cluster's pods.
func strayLeases(s *Snapshot, accounted map[string]bool) []Result {
	var out []Result
	for i := range s.ControllerLeases {
		l := &s.ControllerLeases[i]
		kind := controllerOfLease(l.Name)
		if kind == nil || accounted[l.Namespace+"/"+kind.what] || !leaseFresh(l, s) {
			continue
		}
		out = append(out, Result{
			Check: CheckOtherController, Status: StatusFail, Object: "lease " + l.Namespace + "/" + l.Name,
			Finding: fmt.Sprintf("%s leads somewhere: %s renewed its leader-election Lease %s/%s %s ago, though none of its pods runs in this cluster (it runs outside, e.g. by hand); it reconciles TFJobs too, so the two controllers fight over every TFJob's pods and status",
				kind.what, holder(l), l.Namespace, l.Name, age(s.Now, renewTime(l))),
			Fix: fmt.Sprintf("stop the process %s names (its host and a random suffix); see docs/migration.md", holder(l)),
		})
	}
	return out
}

func controllerOfLease(name string) *otherController {
	for i := range otherControllers {
		if k := &otherControllers[i]; k.lease != "" && k.lease == name {
			return k
		}
	}
	return nil
}

// leaseFresh says the Lease is held and was renewed within its duration.
func leaseFresh(l *coordinationv1.Lease, s *Snapshot) bool {
	_, fresh := freshestLease([]coordinationv1.Lease{*l}, s.Now)
	return fresh
}

// leaseNote adds the controller's fresh Lease in namespace to a finding.
func leaseNote(s *Snapshot, kind *otherController, namespace string) string {
	for i := range s.ControllerLeases {
		l := &s.ControllerLeases[i]
		if l.Namespace == namespace && l.Name == kind.lease && leaseFresh(l, s) {
			return fmt.Sprintf("; its leader %s renewed Lease %s/%s %s ago", holder(l), l.Namespace, l.Name, age(s.Now, renewTime(l)))
		}
	}
	return ""
}

// handOverFix says how to leave TFJobs to backfill alone. managedBy cannot
// split the jobs: both controllers take the jobs whose managedBy is unset
// or kubeflow.org/training-operator.
func handOverFix(kind *otherController, namespace, name string) string {
	fix := fmt.Sprintf("hand every TFJob to backfill: kubectl -n %s delete deployment %s (or kubectl -n %s scale deployment %s --replicas=0, to keep it for a rollback)",
		namespace, name, namespace, name)
	if !kind.onlyTFJobs {
		fix += "; if it also runs PyTorchJobs or other kinds, keep it and list only those in its args with --enable-scheme (e.g. --enable-scheme=pytorchjob), leaving tfjob out"
	}
	return fix + ". spec.runPolicy.managedBy cannot split the jobs between the two (both take jobs whose managedBy is unset or kubeflow.org/training-operator); see docs/migration.md"
}
