package metrics

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// The per-TFJob state gauges' names. They carry the job's name: one series
// per job (a few per replica type), gone with the job; counters never do.
const (
	NameJobInfo        = "backfill_tfjob_info"
	NameJobReplicas    = "backfill_tfjob_replicas"
	NameJobRestarts    = "backfill_tfjob_restarts"
	NameJobDisruptions = "backfill_tfjob_disruptions"
	NameJobCreatedTime = "backfill_tfjob_created_timestamp_seconds"
	NameJobRunningTime = "backfill_tfjob_running_timestamp_seconds"
)

// The values of backfill_tfjob_replicas's state label.
const (
	replicaStateDesired   = "desired"
	replicaStateActive    = "active"
	replicaStateSucceeded = "succeeded"
	replicaStateFailed    = "failed"
)

// ReplicaStates are the values of backfill_tfjob_replicas's state label.
var ReplicaStates = []string{replicaStateDesired, replicaStateActive, replicaStateSucceeded, replicaStateFailed}

// jobState is the collector of the per-TFJob gauges.
var jobState = newJobStateCollector()

func newJobStateCollector() *jobStateCollector {
	return &jobStateCollector{
		info: newGaugeFamily(NameJobInfo,
			"1 per TFJob, with its phase (as in backfill_tfjobs) and the PriorityClass of its pods (several joined by commas).",
			"namespace", "tfjob", "phase", "priority_class"),
		replicas: newGaugeFamily(NameJobReplicas,
			"Replicas of a TFJob by lowercase replica type and state: desired (spec), active, succeeded, failed (status).",
			"namespace", "tfjob", "replica_type", "state"),
		restarts: newGaugeFamily(NameJobRestarts,
			"Restarts of a TFJob charged to its backoffLimit (status.restarts).",
			"namespace", "tfjob"),
		disruptions: newGaugeFamily(NameJobDisruptions,
			"Pods of a TFJob ended by the cluster and recreated without charge to backoffLimit (status.disruptions).",
			"namespace", "tfjob"),
		created: newGaugeFamily(NameJobCreatedTime,
			"Unix time at which a TFJob was created.",
			"namespace", "tfjob"),
		running: newGaugeFamily(NameJobRunningTime,
			"Unix time at which a TFJob last entered Running (its Running condition's lastTransitionTime; after a restart, the latest entry, not the first); absent while it has none.",
			"namespace", "tfjob"),
		training: newTrainingDescs(),
		now:      time.Now,
	}
}

// jobStateCollector reports the state of every TFJob in the manager's cache
// at every scrape, once the manager leads, like backfill_tfjobs.
type jobStateCollector struct {
	info, replicas, restarts, disruptions, created, running gaugeFamily
	training                                                trainingDescs
	// now is the scrape's time, which the goodput account is brought up
	// to; tests fix it.
	now func() time.Time

	mu           sync.Mutex
	reader       client.Reader
	leading      <-chan struct{}
	offlineClass string
}

// use sets where the collector reads jobs from, the channel closed once
// the manager leads, and the class of jobs whose pods name none.
func (c *jobStateCollector) use(reader client.Reader, leading <-chan struct{}, offlineClass string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reader, c.leading, c.offlineClass = reader, leading, offlineClass
}

// Describe implements prometheus.Collector.
func (c *jobStateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range append([]gaugeFamily{c.info, c.replicas, c.restarts, c.disruptions, c.created, c.running}, c.training.all()...) {
		ch <- f.desc
	}
}

// Collect implements prometheus.Collector.
func (c *jobStateCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	reader, leading, offlineClass := c.reader, c.leading, c.offlineClass
	c.mu.Unlock()
	if reader == nil || !closed(leading) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	var jobs kubeflowv1.TFJobList
	if err := reader.List(ctx, &jobs, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.Log.WithName("metrics").Error(err, "Listing TFJobs for "+NameJobInfo)
		return
	}
	now, s := c.now(), newScrape(ch)
	for i := range jobs.Items {
		c.collectJob(s, &jobs.Items[i], offlineClass, now)
	}
}

// collectJob sends the series of one job, as of now.
func (c *jobStateCollector) collectJob(s *scrape, job *kubeflowv1.TFJob, offlineClass string, now time.Time) {
	gauge := func(f gaugeFamily, v float64, labels ...string) {
		values := [4]string{job.Namespace, job.Name}
		n := copy(values[2:], labels)
		s.gauge(f, v, values[:2+n]...)
	}
	gauge(c.info, 1, phaseLabel(state(&job.Status)), jobPriorityClass(job, offlineClass))
	for _, rtype := range kubeflowv1.ReplicaTypes {
		spec := job.Spec.TFReplicaSpecs[rtype]
		if spec == nil {
			continue
		}
		var st kubeflowv1.ReplicaStatus
		if s := job.Status.ReplicaStatuses[rtype]; s != nil {
			st = *s
		}
		label := strings.ToLower(string(rtype))
		gauge(c.replicas, float64(spec.ReplicaCount()), label, replicaStateDesired)
		gauge(c.replicas, float64(st.Active), label, replicaStateActive)
		gauge(c.replicas, float64(st.Succeeded), label, replicaStateSucceeded)
		gauge(c.replicas, float64(st.Failed), label, replicaStateFailed)
	}
	gauge(c.restarts, float64(job.Status.Restarts))
	gauge(c.disruptions, float64(job.Status.Disruptions))
	gauge(c.created, unixSeconds(job.CreationTimestamp.UnixMilli()))
	if ran, ok := runningSince(&job.Status); ok {
		gauge(c.running, ran)
	}
	c.training.collect(job, now, gauge)
}

// runningSince is when the job last started running, from its Running
// condition: its last transition while it is True, and, once the job
// stopped running (Succeeded, Failed, Suspended turn it False), the last
// time it was written True.
func runningSince(st *kubeflowv1.JobStatus) (float64, bool) {
	for _, c := range st.Conditions {
		if c.Type != kubeflowv1.JobRunning {
			continue
		}
		at := c.LastTransitionTime
		if c.Status != corev1.ConditionTrue {
			at = c.LastUpdateTime
		}
		if at.IsZero() {
			return 0, false
		}
		return unixSeconds(at.UnixMilli()), true
	}
	return 0, false
}

// jobPriorityClass is the PriorityClass the operator gives the job's pods;
// distinct classes are sorted and joined by commas.
func jobPriorityClass(job *kubeflowv1.TFJob, offlineClass string) string {
	classes := colocation.JobPriorityClasses(job, offlineClass)
	slices.Sort(classes)
	return strings.Join(classes, ",")
}

func unixSeconds(ms int64) float64 { return float64(ms) / 1000 }
