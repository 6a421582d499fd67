package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

func TestPickReplica(t *testing.T) {
	withChief := makeJob("ns", "a", time.Minute).replicas(kubeflowv1.ReplicaTypeChief, 1, 0).replicas(kubeflowv1.ReplicaTypeWorker, 2, 0).obj()
	workersOnly := makeJob("ns", "b", time.Minute).replicas(kubeflowv1.ReplicaTypeWorker, 2, 0).replicas(kubeflowv1.ReplicaTypePS, 1, 0).obj()
	psOnly := makeJob("ns", "c", time.Minute).replicas(kubeflowv1.ReplicaTypePS, 1, 0).obj()
	pods := func(job *kubeflowv1.TFJob, ids ...string) []corev1.Pod {
		var out []corev1.Pod
		for _, id := range ids {
			rtype, index, _ := strings.Cut(id, "-")
			for t := range job.Spec.TFReplicaSpecs {
				if strings.EqualFold(string(t), rtype) {
					out = append(out, *podOf(job, t, int(index[0]-'0')))
				}
			}
		}
		return out
	}
	for name, tc := range map[string]struct {
		job       *kubeflowv1.TFJob
		pods      []corev1.Pod
		replica   string
		wantPod   string
		wantErr   string
		wantUsage bool
	}{
		"default is the chief":          {job: withChief, pods: pods(withChief, "worker-0", "chief-0"), wantPod: "a-chief-0"},
		"default without chief":         {job: workersOnly, pods: pods(workersOnly, "ps-0", "worker-1", "worker-0"), wantPod: "b-worker-0"},
		"default of a parameter server": {job: psOnly, pods: pods(psOnly, "ps-0"), wantPod: "c-ps-0"},
		"named, any case":               {job: withChief, pods: pods(withChief, "chief-0", "worker-1"), replica: "Worker-1", wantPod: "a-worker-1"},
		"no such replica": {job: workersOnly, pods: pods(workersOnly, "worker-0"), replica: "worker-7", wantUsage: true,
			wantErr: `TFJob b has no replica "worker-7": use --replica with one of ps-0, worker-0, worker-1`},
		"replica without a pod yet": {job: workersOnly, pods: pods(workersOnly, "worker-0"), replica: "worker-1",
			wantErr: "replica worker-1 of TFJob b has no pod yet: see `backfill describe b`"},
	} {
		t.Run(name, func(t *testing.T) {
			pod, err := pickReplica(tc.job, tc.pods, tc.replica)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || isUsageError(err) != tc.wantUsage {
					t.Fatalf("pickReplica = %v, want %q (usage error: %t)", err, tc.wantErr, tc.wantUsage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pod.Name != tc.wantPod {
				t.Errorf("pickReplica = %s, want %s", pod.Name, tc.wantPod)
			}
		})
	}
}

func TestCopyLinesPrefixesEveryLine(t *testing.T) {
	var out bytes.Buffer
	if err := copyLines(&out, strings.NewReader("one\ntwo\nlast without newline"), "[worker-0] "); err != nil {
		t.Fatal(err)
	}
	want := "[worker-0] one\n[worker-0] two\n[worker-0] last without newline\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("copyLines (-want +got):\n%s", diff)
	}
}
