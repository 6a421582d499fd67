package metrics

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// documented is a metric's name, type and labels, as
// docs/observability.md lists them.
type documented struct {
	name, kind string
	labels     []string
}

// every lists every metric, in the order of collectors.
var every = []documented{
	{NameJobsCreated, "counter", []string{"job_namespace", "framework"}},
	{NameJobsDeleted, "counter", []string{"job_namespace", "framework"}},
	{NameJobsSuccessful, "counter", []string{"job_namespace", "framework"}},
	{NameJobsFailed, "counter", []string{"job_namespace", "framework"}},
	{NameJobsRestarted, "counter", []string{"job_namespace", "framework"}},
	{NameJobs, "gauge", []string{"namespace", "phase"}},
	{NameJobInfo, "gauge", []string{"namespace", "tfjob", "phase", "priority_class"}},
	{NameJobReplicas, "gauge", []string{"namespace", "tfjob", "replica_type", "state"}},
	{NameJobRestarts, "gauge", []string{"namespace", "tfjob"}},
	{NameJobDisruptions, "gauge", []string{"namespace", "tfjob"}},
	{NameJobCreatedTime, "gauge", []string{"namespace", "tfjob"}},
	{NameJobRunningTime, "gauge", []string{"namespace", "tfjob"}},
	{NameJobGoodput, "gauge", []string{"namespace", "tfjob", "cause"}},
	{NameJobCheckpointTime, "gauge", []string{"namespace", "tfjob"}},
	{NameJobProgressStep, "gauge", []string{"namespace", "tfjob"}},
	{NameNodeAllocatable, "gauge", []string{"node", "resource"}},
	{NameNodeRequests, "gauge", []string{"node", "tier", "resource"}},
	{NameNodeLimits, "gauge", []string{"node", "tier", "resource"}},
	{NameNodePods, "gauge", []string{"node", "tier", "qos_class"}},
	{NameNodeBatchAllocatable, "gauge", []string{"node", "resource"}},
	{NameNodeBatchAllocated, "gauge", []string{"node", "resource"}},
	{NameOfflinePodInfo, "gauge", []string{"namespace", "pod", "node", "tfjob", "replica_type"}},
	{NameOnlinePodInfo, "gauge", []string{"namespace", "pod", "node", "workload", "offline_beside"}},
	{NameOnlineObjective, "gauge", []string{"namespace", "workload"}},
	{NamePodsCreated, "counter", []string{"replica_type"}},
	{NamePodsDeleted, "counter", []string{"replica_type"}},
	{NameReplicaRestarts, "counter", []string{"cause"}},
	{NameDisruptions, "counter", []string{"reason"}},
	{NameTimeToRunning, "histogram", []string{"namespace"}},
	{NameDuration, "histogram", []string{"result"}},
	{NameReportJobs, "gauge", nil},
	{NameReclaimTarget, "gauge", []string{"node", "resource"}},
	{NameReclaimOnlinePeak, "gauge", []string{"node", "resource"}},
	{NameReclaimUsageAge, "gauge", []string{"node"}},
	{NameReclaimFrozen, "gauge", []string{"node"}},
	{NameReclaimSourceUp, "gauge", []string{"source"}},
	{NameReclaimSyncDuration, "histogram", nil},
	{NameReclaimNodeWrites, "counter", nil},
	{NameReclaimEvictions, "counter", []string{"resource", "result"}},
	{NameOnlineP99, "gauge", []string{"namespace", "workload", "peers"}},
	{NameReclaimOnlineHold, "gauge", []string{"node", "signal"}},
	{NameReclaimOnlineActed, "counter", []string{"action"}},
	{NameGPULoanLent, "gauge", []string{"pool"}},
	{NameGPULoanNextReturn, "gauge", []string{"pool"}},
	{NameGPULoanLendableUntil, "gauge", []string{"pool"}},
	{NameGPULoanReturns, "counter", []string{"pool", "outcome"}},
	{NameGPULoanMissedReturns, "counter", []string{"pool"}},
	{NameGPULoanOnlineWait, "counter", []string{"pool"}},
	{NameGPULoanGPUSeconds, "counter", []string{"pool"}},
	{NameGPULoanLostSeconds, "counter", []string{"pool"}},
}

// stateGauges name a TFJob, pod or node by design, one series per object
// that goes with it; TestJobState and TestColocationState check them.
var stateGauges = []string{
	NameJobInfo, NameJobReplicas, NameJobRestarts, NameJobDisruptions, NameJobCreatedTime, NameJobRunningTime,
	NameJobGoodput, NameJobCheckpointTime, NameJobProgressStep,
	NameNodeAllocatable, NameNodeRequests, NameNodeLimits, NameNodePods, NameOfflinePodInfo,
	NameNodeBatchAllocatable, NameNodeBatchAllocated, NameReclaimTarget, NameReclaimOnlinePeak, NameReclaimUsageAge, NameReclaimFrozen,
	NameOnlinePodInfo, NameOnlineObjective, NameOnlineP99, NameReclaimOnlineHold,
}

// TestLabelsBounded feeds every entry point odd input and checks that each
// series has only its documented labels, with values from the documented
// sets (namespaces aside), and never a job or pod name but in the tfjob
// label of the per-TFJob state gauges, which carry it by design.
func TestLabelsBounded(t *testing.T) {
	namespaces := []string{"team-a", "team-b"}
	bounded := map[string][]string{
		"framework":      {Framework},
		"phase":          append(slices.Clone(Phases), PhaseUnknown),
		"replica_type":   ReplicaTypes,
		"cause":          append([]string{string(CauseExitCode), string(CauseOnFailure), string(CauseInPlace)}, GoodputCauses...),
		"state":          ReplicaStates,
		"priority_class": {"backfill-offline"},
		"reason":         DisruptionReasons,
		"result":         {ResultSucceeded, ResultFailed, EvictionEvicted, EvictionRefused},
		"resource":       BatchResources,
		"source":         {"prometheus", "metrics-api"},
		"action":         OnlineActions,
		"namespace":      namespaces,
		"job_namespace":  namespaces,
		// GPU pools are the models of the cluster's GPUs: a handful.
		"pool":    {"NVIDIA-A100-SXM4-80GB"},
		"outcome": ReturnOutcomes,
	}
	leading := make(chan struct{})
	close(leading)
	var jobs []*kubeflowv1.TFJob
	for i, ns := range namespaces {
		for _, conditions := range [][]string{nil, {"Created"}, {"Created", "Running"}, {"Created", "Restarting"}, {"Created", "Failed"}, {"Created", "Running=False", "Succeeded"}, {"Whatever"}} {
			j := job(ns, twoWorkersOnePS, status(conditions...))
			j.Name = "job-with-a-unique-name-" + ns + strings.Join(conditions, "-") + string(rune('a'+i))
			if len(conditions)%2 == 0 {
				// Some with an account and a checkpoint, the others with neither.
				j.Status.Goodput = &kubeflowv1.Goodput{ProductiveSeconds: 100, ProgressLostSeconds: 50, AccountedTime: metav1.NewTime(ago(time.Minute))}
				j.Status.Progress = &kubeflowv1.Progress{Step: 7, CheckpointStep: ptr.To[int64](5), CheckpointTime: ptr.To(metav1.NewTime(ago(time.Minute)))}
			}
			jobs = append(jobs, j)
		}
	}

	got := gather(t, func() {
		for _, j := range jobs {
			st := with(j.Status, func(st *kubeflowv1.JobStatus) {
				active(Worker, 2, 0)(st)
				active(PS, 1, 0)(st)
				times(ago(100*time.Second), ago(0))(st)
			})
			empty := j.DeepCopy()
			empty.Status = kubeflowv1.JobStatus{}
			ObservePass(Pass{Job: empty, Status: &st, Now: testNow,
				Restarts:    map[RestartCause]int{CauseExitCode: 1, CauseOnFailure: 1, "weird": 1},
				Disruptions: map[string]int{colocation.ReasonDeletionByPodGC: 1, "NodeOnFire": 1},
			})
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: j.Name + "-worker-0", Labels: map[string]string{kubeflowv1.ReplicaTypeLabel: j.Name}}}
			PodCreated(pod)
			PodDeleted(pod)
			jobDeleted(j, nil) // none retiring
		}
		UsageSourceUp("prometheus", true)
		ReclaimSynced(time.Second)
		NodeWritten()
		Evicted("memory", EvictionRefused)
		OnlineActed(OnlineGiveBack)
		ReportedJobs(func() int { return len(jobs) })
		GPULoanPool("NVIDIA-A100-SXM4-80GB", 8, testNow.Add(time.Hour), testNow.Add(2*time.Hour))
		GPULoanReturned("NVIDIA-A100-SXM4-80GB", ReturnLate)
		GPULoanMissedReturn("NVIDIA-A100-SXM4-80GB")
		GPULoanOnlineWaited("NVIDIA-A100-SXM4-80GB", time.Second)
		GPULoanHeld("NVIDIA-A100-SXM4-80GB", 8, 30*time.Second)
		GPULoanLost("NVIDIA-A100-SXM4-80GB", 4, time.Minute)
	})
	ReportedJobs(nil)
	phases := &phaseCollector{desc: jobPhases.desc}
	var objs []client.Object
	for _, j := range jobs {
		objs = append(objs, j)
	}
	phases.use(fakeReader(t, objs...), nil, leading)
	state := newJobStateCollector()
	state.use(fakeReader(t, objs...), leading, "backfill-offline")
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(phases, state)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range series(families) {
		got[k] = v
	}

	if len(got) == 0 {
		t.Fatal("No series at all")
	}
	seen := map[string]bool{}
	for s := range got {
		name, labels, _ := strings.Cut(strings.TrimSuffix(strings.TrimSuffix(s, " count"), " sum"), "{")
		seen[name] = true
		i := slices.IndexFunc(every, func(m documented) bool {
			return m.name == name
		})
		if i < 0 {
			t.Errorf("Series %s of an undocumented metric", s)
			continue
		}
		for _, pair := range strings.Split(strings.TrimSuffix(labels, "}"), ",") {
			if pair == "" {
				continue // a metric without labels
			}
			label, value, _ := strings.Cut(pair, "=")
			if !slices.Contains(every[i].labels, label) {
				t.Errorf("Series %s: label %s is not one of %v", s, label, every[i].labels)
			}
			if label == "tfjob" && slices.Contains(stateGauges, name) {
				if !slices.ContainsFunc(jobs, func(j *kubeflowv1.TFJob) bool { return j.Name == value }) {
					t.Errorf("Series %s: tfjob=%q names no job", s, value)
				}
				continue
			}
			if !slices.Contains(bounded[label], value) {
				t.Errorf("Series %s: %s=%q is not one of %v", s, label, value, bounded[label])
			}
			if strings.Contains(value, "unique-name") {
				t.Errorf("Series %s names a job or pod", s)
			}
		}
	}
	for _, m := range every {
		if !seen[m.name] && !slices.Contains(stateGauges, m.name) {
			t.Errorf("No series of %s: the test does not reach it", m.name)
		}
	}
}

// TestRegister checks that Register puts every metric on controller-
// runtime's registry, the one the manager's /metrics serves.
func TestRegister(t *testing.T) {
	Register()
	Register() // a second manager in the process must not panic
	for _, c := range collectors {
		var already prometheus.AlreadyRegisteredError
		if err := ctrlmetrics.Registry.Register(c); !errors.As(err, &already) {
			t.Errorf("Registering %v again: %v, want AlreadyRegisteredError", DescribedNames(c), err)
		}
	}
	names := Names()
	var want []string
	for _, m := range every {
		want = append(want, m.name)
	}
	if !slices.Equal(names, want) {
		t.Errorf("Registered metrics = %v, want %v", names, want)
	}
}

// TestDocumented checks that docs/observability.md lists every metric
// with its type and labels.
func TestDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| `") {
			name := strings.Split(line, "`")[1]
			rows[name] = line
		}
	}
	for _, m := range every {
		row, ok := rows[m.name]
		if !ok {
			t.Errorf("docs/observability.md has no row for %s", m.name)
			continue
		}
		cells := strings.Split(row, "|")
		if len(cells) < 5 || strings.TrimSpace(cells[2]) != m.kind {
			t.Errorf("docs/observability.md: %s is not listed as a %s: %s", m.name, m.kind, row)
		}
		for _, l := range m.labels {
			if len(cells) < 5 || !strings.Contains(cells[3], "`"+l+"`") {
				t.Errorf("docs/observability.md: %s does not list label %s: %s", m.name, l, row)
			}
		}
	}
	for name := range rows {
		// The node agent's metrics are its own (internal/nodeagent), which
		// the docs' names check compares.
		if strings.HasPrefix(name, "backfill_node_agent_") {
			continue
		}
		if !slices.ContainsFunc(every, func(m documented) bool {
			return m.name == name
		}) && (strings.HasPrefix(name, "backfill_") || strings.HasPrefix(name, "training_operator_")) {
			t.Errorf("docs/observability.md lists %s, which the operator does not export", name)
		}
	}
}
