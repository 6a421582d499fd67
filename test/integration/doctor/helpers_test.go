//go:build integration

package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// result is one line of `doctor -o json`.
type result struct {
	Check   string `json:"check"`
	Status  string `json:"status"`
	Object  string `json:"object"`
	Finding string `json:"finding"`
	Fix     string `json:"fix"`
}

type report struct {
	Results []result       `json:"results"`
	Summary map[string]int `json:"summary"`
	Failed  bool           `json:"failed"`
}

// doctorRun is one run of the binary: its output and exit code.
type doctorRun struct {
	stdout, stderr string
	exitCode       int
}

// runDoctor runs `backfill doctor args...` against the suite's apiserver,
// with a state directory of its own so that no local dev cluster on this
// machine lends it a Prometheus URL.
func runDoctor(t *testing.T, args ...string) doctorRun {
	t.Helper()
	return runDoctorWith(t, kubeconfig, args...)
}

// runDoctorWith is runDoctor as the user of another kubeconfig.
func runDoctorWith(t *testing.T, kubeconfig string, args ...string) doctorRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full := append([]string{"doctor", "--kubeconfig", kubeconfig, "--dev-state-dir", t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, backfill, full...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	run := doctorRun{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		run.exitCode = exit.ExitCode()
	case err != nil:
		t.Fatalf("running backfill %s: %v", strings.Join(full, " "), err)
	}
	return run
}

// anyExit is doctorJSON's wantExit for a test that judges one check
// alone: the checks of the whole cluster may FAIL on what other tests of
// the suite left behind, such as their cluster-wide PriorityClasses.
const anyExit = -1

// doctorJSON runs doctor with -o json and decodes the report.
func doctorJSON(t *testing.T, wantExit int, args ...string) report {
	t.Helper()
	run := runDoctor(t, append(args, "-o", "json")...)
	if wantExit != anyExit && run.exitCode != wantExit {
		t.Fatalf("doctor %s: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), run.exitCode, wantExit, run.stdout, run.stderr)
	}
	var r report
	if err := json.Unmarshal([]byte(run.stdout), &r); err != nil {
		t.Fatalf("doctor -o json printed no report (%v):\n%s", err, run.stdout)
	}
	t.Logf("doctor %s:\n%s", strings.Join(args, " "), run.stdout)
	return r
}

// find returns the results of a check with the given status and object.
func (r report) find(check, status, object string) []result {
	var out []result
	for _, res := range r.Results {
		if res.Check == check && res.Status == status && (object == "" || res.Object == object) {
			out = append(out, res)
		}
	}
	return out
}

// mustFind fails the test unless exactly one result of the check has the
// status and object, and its finding contains every want.
func (r report) mustFind(t *testing.T, check, status, object string, wants ...string) result {
	t.Helper()
	found := r.find(check, status, object)
	if len(found) != 1 {
		t.Fatalf("want one %s %s about %q, got %d; all results: %+v", status, check, object, len(found), r.Results)
	}
	for _, want := range wants {
		if !strings.Contains(found[0].Finding, want) {
			t.Errorf("%s %s finding %q: want %q in it", status, check, found[0].Finding, want)
		}
	}
	return found[0]
}

func newNamespace(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := apiServer.CreateNamespace(ctx, name); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// makeJob is a TFJob of n workers, each requesting (and limited to) the
// given resources.
func makeJob(ns, name string, workers int32, requests corev1.ResourceList) *kubeflowv1.TFJob {
	return &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypeWorker: {
				Replicas:      ptr.To(workers),
				RestartPolicy: kubeflowv1.RestartPolicyOnFailure,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "tensorflow", Image: "tensorflow/tensorflow:2.15.0-gpu",
					Resources: corev1.ResourceRequirements{Requests: requests, Limits: requests},
				}}}},
			},
		}},
	}
}

func quantities(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := apiServer.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// waitFor polls cond every 200 ms for up to 30 s.
func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	var seen string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		done, s := cond(ctx)
		seen = s
		return done, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; last seen: %s", what, err, seen)
	}
}

// jobPods are the pods of a job, by the label the operator sets.
func jobPods(ctx context.Context, ns, job string) []corev1.Pod {
	var pods corev1.PodList
	if err := apiServer.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{kubeflowv1.JobNameLabel: job}); err != nil {
		return nil
	}
	return pods.Items
}

// podsAre waits until the job has n pods that all satisfy ok.
func podsAre(ns, job string, n int, ok func(*corev1.Pod) bool) func(ctx context.Context) (bool, string) {
	return func(ctx context.Context) (bool, string) {
		pods := jobPods(ctx, ns, job)
		var seen []string
		good := 0
		for i := range pods {
			p := &pods[i]
			seen = append(seen, p.Name+" node="+p.Spec.NodeName+" "+string(p.Status.Phase)+" "+scheduledMessage(p))
			if ok(p) {
				good++
			}
		}
		if len(pods) == 0 {
			return false, "no pods; " + describeJob(ctx, ns, job)
		}
		return len(pods) == n && good == n, strings.Join(seen, "; ")
	}
}

// describeJob is the job's conditions and the namespace's warning events,
// for a wait that timed out.
func describeJob(ctx context.Context, ns, name string) string {
	var job kubeflowv1.TFJob
	if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &job); err != nil {
		return err.Error()
	}
	out := "conditions " + fmtConditions(job.Status.Conditions)
	var events corev1.EventList
	if err := apiServer.Client.List(ctx, &events, client.InNamespace(ns)); err == nil {
		for _, e := range events.Items {
			out += "; event " + e.Reason + ": " + e.Message
		}
	}
	return out
}

func scheduledMessage(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return string(c.Status) + "/" + c.Reason + " " + c.Message
		}
	}
	return ""
}

func scheduled(p *corev1.Pod) bool { return p.Spec.NodeName != "" }

// jobCondition waits for a condition of the job with the given status and
// reason.
func jobCondition(ns, name string, ctype kubeflowv1.JobConditionType, status corev1.ConditionStatus, reason string) func(ctx context.Context) (bool, string) {
	return func(ctx context.Context) (bool, string) {
		var job kubeflowv1.TFJob
		if err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &job); err != nil {
			return false, err.Error()
		}
		for _, c := range job.Status.Conditions {
			if c.Type == ctype && c.Status == status && c.Reason == reason {
				return true, ""
			}
		}
		return false, fmtConditions(job.Status.Conditions)
	}
}

func fmtConditions(conds []kubeflowv1.JobCondition) string {
	var s []string
	for _, c := range conds {
		s = append(s, string(c.Type)+"="+string(c.Status)+"/"+c.Reason)
	}
	return strings.Join(s, " ")
}
