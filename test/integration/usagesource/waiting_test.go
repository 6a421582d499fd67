//go:build integration

package usagesource

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/cli"
	"github.com/backfill-dev/backfill/internal/reclaim"
	"github.com/backfill-dev/backfill/test/framework"
)

// A new user's first job in a cluster without metrics-server: its pod
// waits on "Insufficient backfill.dev/batch-cpu" and the job says why in
// its status, kubectl's columns and `backfill get`: no node publishes
// reclaimed capacity because the metrics API is not served, and what to
// do. The reason is written once, not at each of the manager's decisions.
// Installing metrics-server changes the reason without any change to the
// pod (the manager's usage history must cover its window first); once
// capacity is published the pod runs and the reason is gone. Then a pod
// that asks more than any node has free, and one that asks more than any
// node could ever offer, each say so.
func TestAJobSaysWhyItWaitsForReclaimedCapacity(t *testing.T) {
	const ns, name = "ml", "mnist"
	ctx := context.Background()
	if err := apiServer.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	writes := watchWrites(t, ns, name)
	if err := apiServer.Client.Create(ctx, job(ns, name)); err != nil {
		t.Fatal(err)
	}

	waiting := waitForReason(t, ns, name, reclaim.ReasonUsageSourceUnavailable, time.Minute)
	for _, want := range []string{
		"TFJob ml/mnist waits: its pods ask for reclaimed capacity and no node publishes any: the metrics-api usage source fails",
		"the server could not find the requested resource",
		"install metrics-server", "--reclaim-usage-source=prometheus --prometheus-url=URL", "--reclaim=false",
		"backfill.dev/capacity: requested",
	} {
		if !strings.Contains(waiting.Message, want) {
			t.Errorf("message %q: want %q in it", waiting.Message, want)
		}
	}
	pod := &corev1.Pod{}
	if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-worker-0"}, pod); err != nil {
		t.Fatal(err)
	}
	if why := scheduled(pod); !strings.Contains(why.Message, "Insufficient backfill.dev/batch-cpu") {
		t.Errorf("the pod's PodScheduled condition %+v: want the scheduler short of backfill.dev/batch-cpu", why)
	}

	out := kubectl(t, "get", "tfjob", name, "-n", ns)
	t.Logf("kubectl get tfjob:\n%s", out)
	get := fields(out)
	if want := [][]string{{"NAME", "STATE", "AGE", "WAITING"}, {name, "Created", "*", reclaim.ReasonUsageSourceUnavailable}}; !sameTable(get, want) {
		t.Errorf("kubectl get tfjob:\n%v\nwant\n%v", get, want)
	}
	if wide := kubectl(t, "get", "tfjob", name, "-n", ns, "-o", "wide"); !strings.Contains(wide, "WHY") || !strings.Contains(wide, "install metrics-server") {
		t.Errorf("kubectl get tfjob -o wide does not say what to do:\n%s", wide)
	}
	out = backfill(t, "get", name, "-n", ns)
	t.Logf("backfill get:\n%s", out)
	table := fields(out)
	if len(table) != 2 || table[0][len(table[0])-1] != "WAITING" || table[1][1] != "Created" || table[1][len(table[1])-1] != reclaim.ReasonUsageSourceUnavailable {
		t.Errorf("backfill get:\n%v\nwant STATE Created and WAITING %s", table, reclaim.ReasonUsageSourceUnavailable)
	}

	// Each of the manager's decisions (every second) finds the same reason:
	// the job is not written again.
	version := jobNow(t, ns, name).ResourceVersion
	framework.Consistently(t, "a write of the job's status while the reason holds", 5*time.Second, func(ctx context.Context) (bool, error) {
		j := &kubeflowv1.TFJob{}
		err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j)
		return err == nil && j.ResourceVersion != version, err
	})

	metricsServer, err := apiServer.StartMetricsServer(suite.Logs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = metricsServer.Stop() })
	warming := waitForReason(t, ns, name, reclaim.ReasonReclaimWarmingUp, 2*time.Minute)
	if !strings.Contains(warming.Message, "--reclaim-window (1m0s)") || !warming.LastTransitionTime.Equal(&waiting.LastTransitionTime) {
		t.Errorf("condition %+v: want the window in its message and the wait's start kept (%v)", warming, waiting.LastTransitionTime)
	}

	waitFor(t, "the pod placed and the job no longer waiting", 2*time.Minute, func(ctx context.Context) (bool, string) {
		j, p := &kubeflowv1.TFJob{}, &corev1.Pod{}
		if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return false, err.Error()
		}
		if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-worker-0"}, p); err != nil {
			return false, err.Error()
		}
		return p.Spec.NodeName != "" && capacityPending(j) == nil, fmt.Sprintf("pod on %q, conditions %+v", p.Spec.NodeName, j.Status.Conditions)
	})
	// Every write of the job's status that touched the condition changed
	// its reason: set, changed once, removed.
	var reasons []string
	for _, w := range writes() {
		if len(reasons) == 0 || w != reasons[len(reasons)-1] {
			reasons = append(reasons, w)
		}
	}
	t.Logf("the job's status writes, by CapacityPending reason: %q", writes())
	if want := []string{"", reclaim.ReasonUsageSourceUnavailable, reclaim.ReasonReclaimWarmingUp, ""}; !slices.Equal(reasons, want) {
		t.Errorf("CapacityPending across the job's writes: %q, want %q", reasons, want)
	}

	// kubectl leaves the cell of a column with no value empty.
	get = fields(kubectl(t, "get", "tfjob", name, "-n", ns))
	if want := [][]string{{"NAME", "STATE", "AGE", "WAITING"}, {name, "*", "*"}}; !sameTable(get, want) {
		t.Errorf("kubectl get tfjob once the pod is placed:\n%v\nwant WAITING empty", get)
	}

	// The nodes publish about 12 CPU each (16, less the 10% margin and the
	// online pod's 2): a pod asking 14 waits for more, one asking 15 asks
	// more than a node could ever offer (14.4 CPU with no online use).
	for _, tc := range []struct {
		name, cpu, reason, says string
	}{
		{"big", "14", "InsufficientReclaimedCapacity", "no node has enough free now"},
		{"huge", "15", reclaim.ReasonExceedsReclaimableCapacity, "more than any node can ever offer (at most cpu 14400m"},
	} {
		j := job(ns, tc.name)
		j.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse(tc.cpu)
		j.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse(tc.cpu)
		if err := apiServer.Client.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		if c := waitForReason(t, ns, tc.name, tc.reason, time.Minute); !strings.Contains(c.Message, tc.says) {
			t.Errorf("%s: message %q: want %q in it", tc.name, c.Message, tc.says)
		}
	}
}

// watchWrites follows the job's writes; the func it returns lists, for
// each write so far, its CapacityPending condition as "reason" ("" for
// none), and fails the test if a write changed that condition but kept
// its reason.
func watchWrites(t *testing.T, ns, name string) func() []string {
	t.Helper()
	c, err := client.NewWithWatch(apiServer.Env.Config, client.Options{Scheme: framework.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(context.Background(), &kubeflowv1.TFJobList{}, client.InNamespace(ns), client.MatchingFields{"metadata.name": name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var (
		mu     sync.Mutex
		seen   []string
		before *kubeflowv1.JobCondition
	)
	go func() {
		for e := range w.ResultChan() {
			j, ok := e.Object.(*kubeflowv1.TFJob)
			if !ok {
				continue
			}
			c := capacityPending(j)
			reason := ""
			if c != nil {
				reason = c.Reason
			}
			mu.Lock()
			if before != nil && c != nil && c.Reason == before.Reason && (c.Message != before.Message || !c.LastUpdateTime.Equal(&before.LastUpdateTime)) {
				t.Errorf("a write changed the CapacityPending condition but not its reason: %+v, then %+v", *before, *c)
			}
			seen, before = append(seen, reason), c
			mu.Unlock()
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// job is a TFJob of one worker asking for 1 CPU and 1Gi (limits 2 and
// 2Gi), on reclaimed capacity by default.
func job(ns, name string) *kubeflowv1.TFJob {
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi")},
	}
	return &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypeWorker: {
				Replicas:      ptr.To[int32](1),
				RestartPolicy: kubeflowv1.RestartPolicyOnFailure,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: kubeflowv1.ContainerName, Image: "tensorflow/tensorflow:2.16.1", Resources: res,
				}}}},
			},
		}},
	}
}

// waitForReason waits until the job's CapacityPending condition has
// reason, and checks that it is no state: the job's last condition is.
func waitForReason(t *testing.T, ns, name, reason string, timeout time.Duration) kubeflowv1.JobCondition {
	t.Helper()
	var found kubeflowv1.JobCondition
	waitFor(t, "CapacityPending "+reason, timeout, func(ctx context.Context) (bool, string) {
		j := &kubeflowv1.TFJob{}
		if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return false, err.Error()
		}
		c := capacityPending(j)
		if c == nil || c.Reason != reason {
			return false, fmt.Sprintf("conditions %+v", j.Status.Conditions)
		}
		found = *c
		if first, last := j.Status.Conditions[0], j.Status.Conditions[len(j.Status.Conditions)-1]; first.Type != kubeflowv1.JobCapacityPending || last.Type != kubeflowv1.JobCreated {
			t.Errorf("conditions %+v: want CapacityPending first and the state, Created, last", j.Status.Conditions)
		}
		return true, ""
	})
	if found.Status != corev1.ConditionTrue {
		t.Errorf("condition %+v: want True", found)
	}
	return found
}

func capacityPending(j *kubeflowv1.TFJob) *kubeflowv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == kubeflowv1.JobCapacityPending {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func scheduled(p *corev1.Pod) corev1.PodCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c
		}
	}
	return corev1.PodCondition{}
}

func jobNow(t *testing.T, ns, name string) *kubeflowv1.TFJob {
	t.Helper()
	j := &kubeflowv1.TFJob{}
	if err := apiServer.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
		t.Fatal(err)
	}
	return j
}

// waitFor polls cond every 200 ms until it holds or timeout passes, then
// fails with what cond last saw.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	var seen string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		done, s := cond(context.Background()) // the poll's deadline is not the check's: keep what it last saw
		seen = s
		return done, nil
	})
	if err != nil {
		t.Fatalf("Waiting for %s: %v; last seen: %s", what, err, seen)
	}
}

// kubectl runs bin/kubectl as an admin and returns its output.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(framework.BinDir(), "kubectl"), append(args, "--kubeconfig", kubeconfig)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// backfill runs the backfill command line in-process as an admin and
// returns what it printed.
func backfill(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := cli.NewRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(args, "--kubeconfig", kubeconfig))
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("backfill %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// fields splits a table into its rows' cells.
func fields(table string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		rows = append(rows, strings.Fields(line))
	}
	return rows
}

// sameTable compares tables cell by cell; "*" matches any cell.
func sameTable(got, want [][]string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			return false
		}
		for j := range want[i] {
			if want[i][j] != "*" && got[i][j] != want[i][j] {
				return false
			}
		}
	}
	return true
}
