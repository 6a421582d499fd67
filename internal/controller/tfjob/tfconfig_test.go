package tfjob

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// addrs is a JSON list of replica addresses in namespace ns.
func addrs(hostPorts ...string) []any {
	out := make([]any, len(hostPorts))
	for i, h := range hostPorts {
		out[i] = h
	}
	return out
}

// task is the decoded JSON of a TF_CONFIG task.
func task(ttype string, index int) map[string]any {
	return map[string]any{"type": ttype, "index": float64(index)}
}

// decodeJSON decodes s into generic JSON values, so that a comparison
// covers every key, including unexpected ones.
func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("TF_CONFIG is not valid JSON: %v\n%s", err, s)
	}
	return v
}

func TestTFConfigFor(t *testing.T) {
	full := func() *jobBuilder {
		return makeJob("j").replicas(Chief, 1, Never).replicas(PS, 2, Never).replicas(Worker, 2, Never).replicas(Evaluator, 1, Never)
	}
	fullCluster := map[string]any{
		"chief":  addrs("j-chief-0.ns.svc:2222"),
		"ps":     addrs("j-ps-0.ns.svc:2222", "j-ps-1.ns.svc:2222"),
		"worker": addrs("j-worker-0.ns.svc:2222", "j-worker-1.ns.svc:2222"),
	}
	psWorkerCluster := map[string]any{
		"ps":     addrs("j-ps-0.ns.svc:2222", "j-ps-1.ns.svc:2222"),
		"worker": addrs("j-worker-0.ns.svc:2222", "j-worker-1.ns.svc:2222", "j-worker-2.ns.svc:2222"),
	}
	psWorker := func() *jobBuilder {
		return makeJob("j").replicas(PS, 2, Never).replicas(Worker, 3, Never)
	}
	cases := map[string]struct {
		job    *kubeflowv1.TFJob
		rtype  kubeflowv1.ReplicaType
		index  int
		domain string
		want   any
	}{
		"PS and Worker: a worker": {
			job: psWorker().obj(), rtype: Worker, index: 2,
			want: map[string]any{"cluster": psWorkerCluster, "task": task("worker", 2), "environment": "cloud"},
		},
		"PS and Worker: a parameter server": {
			job: psWorker().obj(), rtype: PS, index: 1,
			want: map[string]any{"cluster": psWorkerCluster, "task": task("ps", 1), "environment": "cloud"},
		},
		"Chief, PS, Worker, Evaluator: the chief": {
			job: full().obj(), rtype: Chief, index: 0,
			want: map[string]any{"cluster": fullCluster, "task": task("chief", 0), "environment": "cloud"},
		},
		"Chief, PS, Worker, Evaluator: a worker": {
			job: full().obj(), rtype: Worker, index: 1,
			want: map[string]any{"cluster": fullCluster, "task": task("worker", 1), "environment": "cloud"},
		},
		"Chief, PS, Worker, Evaluator: the evaluator names itself only in its task": {
			job: full().obj(), rtype: Evaluator, index: 0,
			want: map[string]any{"cluster": fullCluster, "task": task("evaluator", 0), "environment": "cloud"},
		},
		"two evaluators: the second one's task": {
			job: makeJob("j").replicas(Worker, 1, Never).replicas(Evaluator, 2, Never).obj(), rtype: Evaluator, index: 1,
			want: map[string]any{
				"cluster":     map[string]any{"worker": addrs("j-worker-0.ns.svc:2222")},
				"task":        task("evaluator", 1),
				"environment": "cloud",
			},
		},
		"the legacy Master is listed as master": {
			job: makeJob("j").replicas(Master, 1, Never).replicas(Worker, 1, Never).obj(), rtype: Master, index: 0,
			want: map[string]any{
				"cluster":     map[string]any{"master": addrs("j-master-0.ns.svc:2222"), "worker": addrs("j-worker-0.ns.svc:2222")},
				"task":        task("master", 0),
				"environment": "cloud",
			},
		},
		"a custom tfjob-port is used for its type only": {
			job: makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).
				ports(Worker, corev1.ContainerPort{Name: "metrics", ContainerPort: 8080}, corev1.ContainerPort{Name: kubeflowv1.PortName, ContainerPort: 3333}).
				obj(),
			rtype: Worker, index: 0,
			want: map[string]any{
				"cluster": map[string]any{
					"ps":     addrs("j-ps-0.ns.svc:2222"),
					"worker": addrs("j-worker-0.ns.svc:3333", "j-worker-1.ns.svc:3333"),
				},
				"task":        task("worker", 0),
				"environment": "cloud",
			},
		},
		"a port with another name is not the TensorFlow port": {
			job: makeJob("j").replicas(Worker, 2, Never).
				ports(Worker, corev1.ContainerPort{Name: "grpc", ContainerPort: 5000}).obj(),
			rtype: Worker, index: 1,
			want: map[string]any{
				"cluster":     map[string]any{"worker": addrs("j-worker-0.ns.svc:2222", "j-worker-1.ns.svc:2222")},
				"task":        task("worker", 1),
				"environment": "cloud",
			},
		},
		"lowercase keys are normalised by Default": {
			job:   makeJob("j").replicas("ps", 2, Never).replicas("worker", 3, Never).obj(),
			rtype: Worker, index: 0,
			want: map[string]any{"cluster": psWorkerCluster, "task": task("worker", 0), "environment": "cloud"},
		},
		"keys in any case are normalised by Default": {
			job:   makeJob("j").replicas("Ps", 2, Never).replicas("WORKER", 3, Never).obj(),
			rtype: PS, index: 0,
			want: map[string]any{"cluster": psWorkerCluster, "task": task("ps", 0), "environment": "cloud"},
		},
		"a cluster domain is appended to every address": {
			job: makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).obj(), rtype: Worker, index: 1, domain: "cluster.local",
			want: map[string]any{
				"cluster": map[string]any{
					"ps":     addrs("j-ps-0.ns.svc.cluster.local:2222"),
					"worker": addrs("j-worker-0.ns.svc.cluster.local:2222", "j-worker-1.ns.svc.cluster.local:2222"),
				},
				"task":        task("worker", 1),
				"environment": "cloud",
			},
		},
		"enableDynamicWorker: a worker knows every PS and itself": {
			job: psWorker().dynamicWorker().obj(), rtype: Worker, index: 1,
			want: map[string]any{
				"cluster": map[string]any{
					"ps":     addrs("j-ps-0.ns.svc:2222", "j-ps-1.ns.svc:2222"),
					"worker": map[string]any{"1": "j-worker-1.ns.svc:2222"},
				},
				"task": task("worker", 1),
			},
		},
		"enableDynamicWorker: a PS knows itself": {
			job: psWorker().dynamicWorker().obj(), rtype: PS, index: 1,
			want: map[string]any{
				"cluster": map[string]any{"ps": addrs("j-ps-1.ns.svc:2222"), "worker": map[string]any{}},
				"task":    task("ps", 1),
			},
		},
		"enableDynamicWorker: a worker of a job without PS": {
			job: makeJob("j").replicas(Worker, 2, Never).dynamicWorker().obj(), rtype: Worker, index: 0,
			want: map[string]any{
				"cluster": map[string]any{"ps": addrs(), "worker": map[string]any{"0": "j-worker-0.ns.svc:2222"}},
				"task":    task("worker", 0),
			},
		},
		"enableDynamicWorker: the chief knows nobody": {
			job: full().dynamicWorker().obj(), rtype: Chief, index: 0,
			want: map[string]any{
				"cluster": map[string]any{"ps": addrs(), "worker": map[string]any{}},
				"task":    task("chief", 0),
			},
		},
		"enableDynamicWorker with a cluster domain": {
			job: psWorker().dynamicWorker().obj(), rtype: Worker, index: 2, domain: "example.org",
			want: map[string]any{
				"cluster": map[string]any{
					"ps":     addrs("j-ps-0.ns.svc.example.org:2222", "j-ps-1.ns.svc.example.org:2222"),
					"worker": map[string]any{"2": "j-worker-2.ns.svc.example.org:2222"},
				},
				"task": task("worker", 2),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tfConfigFor(tc.job, tc.rtype, tc.index, tc.domain)
			if err != nil {
				t.Fatalf("tfConfigFor: %v", err)
			}
			if diff := cmp.Diff(tc.want, decodeJSON(t, got)); diff != "" {
				t.Errorf("TF_CONFIG (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodForTFConfig checks that exactly the tensorflow container of a
// distributed job gets TF_CONFIG, and that each pod's task is its own.
func TestPodForTFConfig(t *testing.T) {
	sidecar := corev1.Container{Name: "sidecar", Image: "busybox"}
	cases := map[string]struct {
		job        *kubeflowv1.TFJob
		opts       podOptions
		wantConfig map[replicaID]any // nil: no pod has TF_CONFIG
	}{
		"a single worker gets no TF_CONFIG": {
			job: makeJob("j").replicas(Worker, 1, Never).obj(),
		},
		"a single chief with zero workers gets no TF_CONFIG": {
			job: makeJob("j").replicas(Chief, 1, Never).replicas(Worker, 0, Never).obj(),
		},
		"a single worker with replicas defaulted to 1 gets no TF_CONFIG": {
			job: func() *kubeflowv1.TFJob {
				job := makeJob("j").replicas(Worker, 1, Never).rawObj()
				job.Spec.TFReplicaSpecs[Worker].Replicas = nil
				kubeflowv1.Default(job)
				return job
			}(),
		},
		"a worker and an evaluator are distributed": {
			job:  makeJob("j").replicas(Worker, 1, Never).replicas(Evaluator, 1, Never).obj(),
			opts: podOptions{clusterDomain: "cluster.local"},
			wantConfig: map[replicaID]any{
				{Worker, 0}: map[string]any{
					"cluster":     map[string]any{"worker": addrs("j-worker-0.ns.svc.cluster.local:2222")},
					"task":        task("worker", 0),
					"environment": "cloud",
				},
				{Evaluator, 0}: map[string]any{
					"cluster":     map[string]any{"worker": addrs("j-worker-0.ns.svc.cluster.local:2222")},
					"task":        task("evaluator", 0),
					"environment": "cloud",
				},
			},
		},
		"chief and two workers": {
			job: makeJob("j").replicas(Chief, 1, Never).replicas(Worker, 2, Never).obj(),
			wantConfig: func() map[replicaID]any {
				cluster := map[string]any{
					"chief":  addrs("j-chief-0.ns.svc:2222"),
					"worker": addrs("j-worker-0.ns.svc:2222", "j-worker-1.ns.svc:2222"),
				}
				return map[replicaID]any{
					{Chief, 0}:  map[string]any{"cluster": cluster, "task": task("chief", 0), "environment": "cloud"},
					{Worker, 0}: map[string]any{"cluster": cluster, "task": task("worker", 0), "environment": "cloud"},
					{Worker, 1}: map[string]any{"cluster": cluster, "task": task("worker", 1), "environment": "cloud"},
				}
			}(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, spec := range tc.job.Spec.TFReplicaSpecs {
				spec.Template.Spec.Containers = append(spec.Template.Spec.Containers, sidecar)
			}
			got := map[replicaID]any{}
			for _, id := range allReplicas(tc.job) {
				pod, err := podFor(tc.job, id.rtype, id.index, tc.opts)
				if err != nil {
					t.Fatalf("podFor(%v): %v", id, err)
				}
				for _, c := range pod.Spec.Containers {
					for _, env := range c.Env {
						if env.Name != "TF_CONFIG" {
							continue
						}
						if c.Name != kubeflowv1.ContainerName {
							t.Errorf("%s: container %s has TF_CONFIG", pod.Name, c.Name)
							continue
						}
						if _, dup := got[id]; dup {
							t.Errorf("%s: TF_CONFIG set twice", pod.Name)
						}
						got[id] = decodeJSON(t, env.Value)
					}
				}
			}
			want := tc.wantConfig
			if want == nil {
				want = map[replicaID]any{}
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(replicaID{})); diff != "" {
				t.Errorf("TF_CONFIG by replica (-want +got):\n%s", diff)
			}
		})
	}
}
