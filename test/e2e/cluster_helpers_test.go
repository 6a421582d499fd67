//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/devcluster"
	"github.com/backfill-dev/backfill/test/framework"
)

// devCluster is one `backfill dev up --detach` cluster of a test.
type devCluster struct {
	stateDir string
	state    *devcluster.State
	client   client.WithWatch
	observer *observer
}

// startCluster starts a local cluster with no demo workloads and the given
// sizes and flags, and stops it when the test ends. On failure it logs what
// the cluster held and keeps its component logs for the post-mortem.
func startCluster(t *testing.T, args ...string) *devCluster {
	t.Helper()
	stateDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	up := append([]string{"dev", "up", "--detach", "--demo=false", "--bin-dir", framework.BinDir(), "--state-dir", stateDir}, args...)
	cmd := exec.CommandContext(ctx, backfill, up...)
	cmd.Dir = framework.RepoRoot()
	started := time.Now()
	out, err := cmd.CombinedOutput()
	// Stop the cluster even when dev up failed half-way.
	t.Cleanup(func() {
		down := exec.Command(backfill, "dev", "down", "--state-dir", stateDir)
		if out, err := down.CombinedOutput(); err != nil && !strings.Contains(string(out), "no local cluster runs") {
			t.Errorf("dev down: %v\n%s", err, out)
		}
	})
	if err != nil {
		keepLogs(t, stateDir)
		t.Fatalf("backfill %s: %v\n%s", strings.Join(up, " "), err, out)
	}
	t.Logf("Cluster up in %v: backfill %s", time.Since(started).Round(time.Second), strings.Join(args, " "))
	state, err := devcluster.ReadState(stateDir)
	if err != nil {
		t.Fatalf("Reading the state after dev up: %v", err)
	}
	// controller-runtime's client logs through a logger nobody set.
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	cfg, err := clientcmd.BuildConfigFromFlags("", state.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: framework.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	dc := &devCluster{stateDir: stateDir, state: state, client: c}
	octx, stop := context.WithCancel(context.Background())
	dc.observer = observe(octx, c)
	// Registered after dev down, so it runs before it.
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			dc.dump(t)
			keepLogs(t, stateDir)
		}
	})
	return dc
}

// keepLogs copies the cluster's logs out of the test's temporary
// directory, which is removed when the test ends.
func keepLogs(t *testing.T, stateDir string) {
	dst, err := os.MkdirTemp("", "backfill-e2e-logs-"+strings.ReplaceAll(t.Name(), "/", "-")+"-")
	if err != nil {
		return
	}
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(stateDir, "logs"))); err == nil {
		for _, name := range []string{"up.log", filepath.Join("kwok", "kwok.log")} {
			if data, err := os.ReadFile(filepath.Join(stateDir, name)); err == nil {
				_ = os.WriteFile(filepath.Join(dst, filepath.Base(name)), data, 0o644)
			}
		}
		t.Logf("Cluster logs kept in %s", dst)
	}
}

// dump logs the TFJobs, pods, events and the observed history, so that a
// failure says what the cluster did.
func (dc *devCluster) dump(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var b strings.Builder
	var jobs kubeflowv1.TFJobList
	if err := dc.client.List(ctx, &jobs); err == nil {
		for i := range jobs.Items {
			fmt.Fprintf(&b, "TFJob %s\n", describeJob(&jobs.Items[i]))
		}
	}
	var pods corev1.PodList
	if err := dc.client.List(ctx, &pods); err == nil {
		for i := range pods.Items {
			fmt.Fprintf(&b, "Pod %s\n", describePod(&pods.Items[i]))
		}
	}
	var events eventsv1.EventList
	if err := dc.client.List(ctx, &events); err == nil {
		sort.Slice(events.Items, func(i, j int) bool {
			return eventTime(&events.Items[i]).Before(eventTime(&events.Items[j]))
		})
		for _, e := range events.Items {
			if e.Regarding.Kind == "Node" || e.Regarding.Kind == "" {
				continue
			}
			fmt.Fprintf(&b, "Event %s %s %s/%s %s: %s\n", eventTime(&e).Format("15:04:05"), e.Type, e.Regarding.Kind, e.Regarding.Name, e.Reason, e.Note)
		}
	}
	b.WriteString(dc.observer.String())
	t.Logf("State of the cluster at the failure:\n%s", b.String())
}

func eventTime(e *eventsv1.Event) time.Time {
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	if !e.DeprecatedLastTimestamp.IsZero() {
		return e.DeprecatedLastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// describeJob is a job's conditions and counts on one line.
func describeJob(job *kubeflowv1.TFJob) string {
	var conds []string
	for _, c := range job.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return fmt.Sprintf("%s/%s conditions [%s] restarts %d disruptions %d", job.Namespace, job.Name, strings.Join(conds, " "), job.Status.Restarts, job.Status.Disruptions)
}

// describePod is a pod's node, phase, priority and notable conditions.
func describePod(pod *corev1.Pod) string {
	var notes []string
	for _, c := range pod.Status.Conditions {
		switch {
		case c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue:
			notes = append(notes, fmt.Sprintf("PodScheduled=%s/%s %q", c.Status, c.Reason, c.Message))
		case c.Type == corev1.DisruptionTarget:
			notes = append(notes, fmt.Sprintf("DisruptionTarget=%s/%s", c.Status, c.Reason))
		}
	}
	if pod.DeletionTimestamp != nil {
		notes = append(notes, "deleting")
	}
	prio := "-"
	if pod.Spec.Priority != nil {
		prio = fmt.Sprint(*pod.Spec.Priority)
	}
	node := pod.Spec.NodeName
	if node == "" {
		node = "<none>"
	}
	return fmt.Sprintf("%s/%s node %s phase %s priorityClass %q priority %s %s", pod.Namespace, pod.Name, node, pod.Status.Phase, pod.Spec.PriorityClassName, prio, strings.Join(notes, " "))
}

// check is one look at the cluster: whether the awaited state holds, a
// description of what was seen, and an error that ends the wait at once
// (a state the test must never reach).
type check func(ctx context.Context) (done bool, seen string, err error)

// waitFor polls check every 250 ms until it holds, and fails the test with
// the last state seen when it returns an error or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond check) {
	t.Helper()
	var seen string
	var fatal error
	started := time.Now()
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		// Each look has its own time, so that the last one still sees.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done, s, err := cond(ctx)
		seen = s
		fatal = err
		return done, err
	})
	switch {
	case fatal != nil:
		t.Fatalf("Waiting for %s: %v\nlast seen: %s", what, fatal, seen)
	case err != nil:
		t.Fatalf("Waiting for %s: not within %v\nlast seen: %s", what, timeout, seen)
	}
	t.Logf("%s after %v", what, time.Since(started).Round(100*time.Millisecond))
}

// createNamespace creates a namespace and waits for its default
// ServiceAccount, without which pods are refused.
func createNamespace(t *testing.T, c client.Client, name string) {
	t.Helper()
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("Creating namespace %s: %v", name, err)
	}
	waitFor(t, time.Minute, "the default ServiceAccount of "+name, func(ctx context.Context) (bool, string, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: name, Name: "default"}, &corev1.ServiceAccount{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("Creating %T %s/%s: %v", obj, obj.GetNamespace(), obj.GetName(), err)
	}
}

// getJob reads a TFJob.
func getJob(ctx context.Context, c client.Client, ns, name string) (*kubeflowv1.TFJob, error) {
	job := &kubeflowv1.TFJob{}
	return job, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job)
}

// jobPods are the pods of a TFJob, by the label Kubeflow v1 sets, in name
// order.
func jobPods(ctx context.Context, c client.Client, ns, job string) ([]corev1.Pod, error) {
	return listPods(ctx, c, ns, client.MatchingLabels{kubeflowv1.JobNameLabel: job})
}

func listPods(ctx context.Context, c client.Client, ns string, selector client.MatchingLabels) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), selector); err != nil {
		return nil, err
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	return pods.Items, nil
}

// describePods is the one-line description of each pod.
func describePods(pods []corev1.Pod) string {
	var lines []string
	for i := range pods {
		lines = append(lines, describePod(&pods[i]))
	}
	return strings.Join(lines, "; ")
}

// lastCondition is the job's state: its last condition.
func lastCondition(job *kubeflowv1.TFJob) kubeflowv1.JobCondition {
	if n := len(job.Status.Conditions); n > 0 {
		return job.Status.Conditions[n-1]
	}
	return kubeflowv1.JobCondition{}
}

// findCondition is the job's condition of a type, or nil.
func findCondition(job *kubeflowv1.TFJob, ctype kubeflowv1.JobConditionType) *kubeflowv1.JobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == ctype {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// isFailed reports whether the job has failed.
func isFailed(job *kubeflowv1.TFJob) bool {
	c := findCondition(job, kubeflowv1.JobFailed)
	return c != nil && c.Status == corev1.ConditionTrue
}

// jobSucceeds waits until the job has Succeeded, and ends the wait at once
// if it fails.
func jobSucceeds(c client.Client, ns, name string) check {
	return func(ctx context.Context) (bool, string, error) {
		job, err := getJob(ctx, c, ns, name)
		if err != nil {
			return false, err.Error(), nil
		}
		if isFailed(job) {
			return false, describeJob(job), fmt.Errorf("TFJob %s failed", name)
		}
		last := lastCondition(job)
		return last.Type == kubeflowv1.JobSucceeded && last.Status == corev1.ConditionTrue, describeJob(job), nil
	}
}

// podsRunning waits until the job has n pods, all Running, none being
// deleted; it ends the wait if the job fails.
func podsRunning(c client.Client, ns, name string, n int) check {
	return func(ctx context.Context) (bool, string, error) {
		job, err := getJob(ctx, c, ns, name)
		if err != nil {
			return false, err.Error(), nil
		}
		if isFailed(job) {
			return false, describeJob(job), fmt.Errorf("TFJob %s failed", name)
		}
		pods, err := jobPods(ctx, c, ns, name)
		if err != nil {
			return false, err.Error(), nil
		}
		running := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		return running == n && len(pods) == n, describePods(pods), nil
	}
}

// findEvent returns the events of a reason about an object, newest last.
func findEvents(ctx context.Context, c client.Client, ns, name, reason string) ([]eventsv1.Event, error) {
	var events eventsv1.EventList
	if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var found []eventsv1.Event
	for _, e := range events.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			found = append(found, e)
		}
	}
	return found, nil
}

// eventSeen waits for an event of the type and reason about an object.
func eventSeen(c client.Client, ns, name, eventType, reason string) check {
	return func(ctx context.Context) (bool, string, error) {
		events, err := findEvents(ctx, c, ns, name, reason)
		if err != nil {
			return false, err.Error(), nil
		}
		var seen []string
		for _, e := range events {
			if e.Type == eventType {
				return true, e.Note, nil
			}
			seen = append(seen, e.Type+" "+e.Note)
		}
		return false, fmt.Sprintf("events of reason %s: %v", reason, seen), nil
	}
}

// podScheduledFalse reports whether the scheduler tried the pod and found
// no room for it.
func podScheduledFalse(pod *corev1.Pod) (string, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c.Message, true
		}
	}
	return "", false
}

// ignoreNotFound turns NotFound into nil.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// createTFJob creates a job, waits until its first pods exist and checks
// that they carry the template's annotations: the simulated training reads
// its duration and exit code from them, as real sidecars and tools read
// theirs (Kubeflow manifests often set sidecar.istio.io/inject there).
func createTFJob(t *testing.T, c client.Client, job *kubeflowv1.TFJob) {
	t.Helper()
	want := templateAnnotations(job)
	create(t, c, job)
	checkTemplateAnnotations(t, c, job.Namespace, job.Name, want)
}

// templateAnnotations are the annotations of each replica type's template,
// by the lowercase type the pods' label carries. Take them before Create,
// which replaces the object with what the apiserver stored.
func templateAnnotations(job *kubeflowv1.TFJob) map[string]map[string]string {
	want := map[string]map[string]string{}
	for rtype, spec := range job.Spec.TFReplicaSpecs {
		want[strings.ToLower(string(rtype))] = maps.Clone(spec.Template.Annotations)
	}
	return want
}

// checkTemplateAnnotations waits until the job's first pods exist and
// checks that they carry the annotations of their templates.
func checkTemplateAnnotations(t *testing.T, c client.Client, ns, name string, want map[string]map[string]string) {
	t.Helper()
	var pods []corev1.Pod
	waitFor(t, 30*time.Second, "the first pods of TFJob "+name, func(ctx context.Context) (bool, string, error) {
		var err error
		if pods, err = jobPods(ctx, c, ns, name); err != nil {
			return false, err.Error(), nil
		}
		return len(pods) > 0, describePods(pods), nil
	})
	for _, p := range pods {
		rtype := p.Labels[kubeflowv1.ReplicaTypeLabel]
		for k, v := range want[rtype] {
			if p.Annotations[k] != v {
				stored, err := getJob(context.Background(), c, ns, name)
				template := fmt.Sprint(err)
				if err == nil {
					for t, spec := range stored.Spec.TFReplicaSpecs {
						if strings.EqualFold(string(t), rtype) {
							template = fmt.Sprintf("labels %v, annotations %v", spec.Template.Labels, spec.Template.Annotations)
						}
					}
				}
				t.Fatalf("Pod %s lacks its template's annotation %s: %q (the pod has %v); the TFJob as stored has a template with %s",
					p.Name, k, v, p.Annotations, template)
			}
		}
	}
}
