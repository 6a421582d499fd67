package gpusim

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)

// gpuNode is a node advertising gpus allocatable GPUs (none: a CPU node).
func gpuNode(name string, gpus int) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}
	if gpus > 0 {
		n.Status.Allocatable[ResourceGPU] = *resource.NewQuantity(int64(gpus), resource.DecimalSI)
	}
	return n
}

// podBuilder builds test pods: running on a node, created at t0 plus an
// offset, with containers requesting GPUs.
type podBuilder struct{ pod corev1.Pod }

func makePod(name, node string) *podBuilder {
	return &podBuilder{pod: corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", CreationTimestamp: metav1.NewTime(t0)},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}}
}

func (b *podBuilder) createdAfter(d time.Duration) *podBuilder {
	b.pod.CreationTimestamp = metav1.NewTime(t0.Add(d))
	return b
}

// container adds a container requesting gpus GPUs (0: none).
func (b *podBuilder) container(name string, gpus int) *podBuilder {
	c := corev1.Container{Name: name}
	if gpus > 0 {
		q := *resource.NewQuantity(int64(gpus), resource.DecimalSI)
		c.Resources.Requests = corev1.ResourceList{ResourceGPU: q}
		c.Resources.Limits = corev1.ResourceList{ResourceGPU: q}
	}
	b.pod.Spec.Containers = append(b.pod.Spec.Containers, c)
	return b
}

// limitOnly adds a container with a GPU limit and no request, as a pod
// looks before the apiserver defaults it.
func (b *podBuilder) limitOnly(name string, gpus int) *podBuilder {
	c := corev1.Container{Name: name}
	c.Resources.Limits = corev1.ResourceList{ResourceGPU: *resource.NewQuantity(int64(gpus), resource.DecimalSI)}
	b.pod.Spec.Containers = append(b.pod.Spec.Containers, c)
	return b
}

func (b *podBuilder) phase(p corev1.PodPhase) *podBuilder {
	b.pod.Status.Phase = p
	return b
}

func (b *podBuilder) terminating() *podBuilder {
	ts := metav1.NewTime(t0.Add(time.Hour))
	b.pod.DeletionTimestamp = &ts
	return b
}

func (b *podBuilder) annotate(k, v string) *podBuilder {
	if b.pod.Annotations == nil {
		b.pod.Annotations = map[string]string{}
	}
	b.pod.Annotations[k] = v
	return b
}

func (b *podBuilder) obj() corev1.Pod { return b.pod }

// holding summarises a GPU's allocation as "node/index=namespace/pod/container"
// keys, "" for free, so that expectations read as a table.
func holding(gpus []GPU) map[string]string {
	m := map[string]string{}
	for _, g := range gpus {
		v := ""
		if g.Allocated() {
			v = g.Namespace + "/" + g.Pod + "/" + g.Container
		}
		m[g.Hostname+"/"+strconv.Itoa(g.Index)] = v
	}
	return m
}

// free adds node's GPUs from..to-1 to want as free ones.
func free(want map[string]string, node string, from, to int) map[string]string {
	for i := from; i < to; i++ {
		want[node+"/"+strconv.Itoa(i)] = ""
	}
	return want
}

func TestSnapshotAllocation(t *testing.T) {
	cases := map[string]struct {
		nodes []corev1.Node
		pods  []corev1.Pod
		want  map[string]string
	}{
		"a node without pods has only free GPUs": {
			nodes: []corev1.Node{gpuNode("gpu-a", 4)},
			want:  free(map[string]string{}, "gpu-a", 0, 4),
		},
		"a CPU node has no GPUs": {
			nodes: []corev1.Node{gpuNode("cpu-a", 0), gpuNode("gpu-a", 1)},
			pods:  []corev1.Pod{makePod("web", "cpu-a").container("web", 0).obj()},
			want:  map[string]string{"gpu-a/0": ""},
		},
		"one pod with 2 GPUs on an 8-GPU node takes indexes 0 and 1": {
			nodes: []corev1.Node{gpuNode("gpu-a", 8)},
			pods:  []corev1.Pod{makePod("train-worker-0", "gpu-a").container("tensorflow", 2).obj()},
			want: free(map[string]string{
				"gpu-a/0": "ml/train-worker-0/tensorflow",
				"gpu-a/1": "ml/train-worker-0/tensorflow",
			}, "gpu-a", 2, 8),
		},
		"two pods are served in creation order, whatever the list order": {
			nodes: []corev1.Node{gpuNode("gpu-a", 8)},
			pods: []corev1.Pod{
				makePod("a-late", "gpu-a").createdAfter(time.Minute).container("tensorflow", 1).obj(),
				makePod("z-early", "gpu-a").container("tensorflow", 3).obj(),
			},
			want: free(map[string]string{
				"gpu-a/0": "ml/z-early/tensorflow",
				"gpu-a/1": "ml/z-early/tensorflow",
				"gpu-a/2": "ml/z-early/tensorflow",
				"gpu-a/3": "ml/a-late/tensorflow",
			}, "gpu-a", 4, 8),
		},
		"pods created at the same time are served by name": {
			nodes: []corev1.Node{gpuNode("gpu-a", 2)},
			pods: []corev1.Pod{
				makePod("b", "gpu-a").container("tensorflow", 1).obj(),
				makePod("a", "gpu-a").container("tensorflow", 1).obj(),
			},
			want: map[string]string{"gpu-a/0": "ml/a/tensorflow", "gpu-a/1": "ml/b/tensorflow"},
		},
		"each container takes the next free indexes": {
			nodes: []corev1.Node{gpuNode("gpu-a", 4)},
			pods: []corev1.Pod{makePod("multi", "gpu-a").
				container("main", 1).container("sidecar", 0).limitOnly("helper", 2).obj()},
			want: map[string]string{
				"gpu-a/0": "ml/multi/main",
				"gpu-a/1": "ml/multi/helper",
				"gpu-a/2": "ml/multi/helper",
				"gpu-a/3": "",
			},
		},
		"pods are attributed to the node they are bound to": {
			nodes: []corev1.Node{gpuNode("gpu-b", 1), gpuNode("gpu-a", 1)},
			pods: []corev1.Pod{
				makePod("on-b", "gpu-b").container("tensorflow", 1).obj(),
				makePod("on-a", "gpu-a").container("tensorflow", 1).obj(),
			},
			want: map[string]string{"gpu-a/0": "ml/on-a/tensorflow", "gpu-b/0": "ml/on-b/tensorflow"},
		},
		"a pending pod gets nothing": {
			nodes: []corev1.Node{gpuNode("gpu-a", 2)},
			pods: []corev1.Pod{
				makePod("bound-pending", "gpu-a").phase(corev1.PodPending).container("tensorflow", 2).obj(),
				makePod("unbound", "").phase(corev1.PodPending).container("tensorflow", 2).obj(),
			},
			want: free(map[string]string{}, "gpu-a", 0, 2),
		},
		"finished pods get nothing": {
			nodes: []corev1.Node{gpuNode("gpu-a", 2)},
			pods: []corev1.Pod{
				makePod("done", "gpu-a").phase(corev1.PodSucceeded).container("tensorflow", 1).obj(),
				makePod("failed", "gpu-a").phase(corev1.PodFailed).container("tensorflow", 1).obj(),
			},
			want: free(map[string]string{}, "gpu-a", 0, 2),
		},
		"a terminating pod releases its GPUs to the next pod": {
			nodes: []corev1.Node{gpuNode("gpu-a", 2)},
			pods: []corev1.Pod{
				makePod("preempted", "gpu-a").terminating().container("tensorflow", 2).obj(),
				makePod("online", "gpu-a").createdAfter(time.Hour).container("server", 1).obj(),
			},
			want: map[string]string{"gpu-a/0": "ml/online/server", "gpu-a/1": ""},
		},
		"a container that does not fit gets nothing": {
			nodes: []corev1.Node{gpuNode("gpu-a", 2)},
			pods: []corev1.Pod{
				makePod("first", "gpu-a").container("tensorflow", 1).obj(),
				makePod("second", "gpu-a").createdAfter(time.Second).container("tensorflow", 2).obj(),
			},
			want: map[string]string{"gpu-a/0": "ml/first/tensorflow", "gpu-a/1": ""},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := holding(Snapshot(tc.nodes, tc.pods, t0))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GPU holders (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSnapshotReadings(t *testing.T) {
	nodes := []corev1.Node{gpuNode("gpu-a", 1)}
	cases := map[string]struct {
		pods     []corev1.Pod
		wantUtil float64 // ignored when wantBusy
		wantBusy bool    // the default busy value: 85 ± 4
	}{
		"a free GPU idles": {
			wantUtil: 0,
		},
		"a held GPU without annotation is busy": {
			pods:     []corev1.Pod{makePod("p", "gpu-a").container("c", 1).obj()},
			wantBusy: true,
		},
		"the annotation sets the utilisation": {
			pods:     []corev1.Pod{makePod("p", "gpu-a").container("c", 1).annotate(UtilAnnotation, "12.5").obj()},
			wantUtil: 12.5,
		},
		"the annotation can stage an idle job": {
			pods:     []corev1.Pod{makePod("p", "gpu-a").container("c", 1).annotate(UtilAnnotation, "0").obj()},
			wantUtil: 0,
		},
		"an annotation above 100 is clamped": {
			pods:     []corev1.Pod{makePod("p", "gpu-a").container("c", 1).annotate(UtilAnnotation, "250").obj()},
			wantUtil: 100,
		},
		"an annotation that is not a number is ignored": {
			pods:     []corev1.Pod{makePod("p", "gpu-a").container("c", 1).annotate(UtilAnnotation, "high").obj()},
			wantBusy: true,
		},
		"the annotation of a pod holding no GPU changes nothing": {
			pods:     []corev1.Pod{makePod("p", "gpu-a").container("c", 0).annotate(UtilAnnotation, "50").obj()},
			wantUtil: 0,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gpus := Snapshot(nodes, tc.pods, t0)
			if len(gpus) != 1 {
				t.Fatalf("got %d GPUs, want 1", len(gpus))
			}
			g := gpus[0]
			if tc.wantBusy {
				if g.Util < busyUtil-wobbleUtil || g.Util > busyUtil+wobbleUtil {
					t.Errorf("Util = %v, want busy (%v ± %v)", g.Util, busyUtil, wobbleUtil)
				}
			} else if g.Util != tc.wantUtil {
				t.Errorf("Util = %v, want %v", g.Util, tc.wantUtil)
			}
			checkConsistent(t, g)
		})
	}
}

// checkConsistent checks the invariants every reading keeps.
func checkConsistent(t *testing.T, g GPU) {
	t.Helper()
	if g.Util < 0 || g.Util > 100 {
		t.Errorf("Util = %v, want within 0–100", g.Util)
	}
	if g.GrEngineActive != g.Util/100 {
		t.Errorf("GrEngineActive = %v, want Util/100 = %v", g.GrEngineActive, g.Util/100)
	}
	if g.FBUsedMiB+g.FBFreeMiB != FBTotalMiB || g.FBUsedMiB < 0 || g.FBFreeMiB < 0 {
		t.Errorf("FB used %v + free %v, want both ≥ 0 adding up to %d MiB", g.FBUsedMiB, g.FBFreeMiB, FBTotalMiB)
	}
	if !g.Allocated() && g.FBUsedMiB != 0 {
		t.Errorf("free GPU uses %v MiB, want 0", g.FBUsedMiB)
	}
	if g.Allocated() && g.FBUsedMiB == 0 {
		t.Errorf("held GPU uses no framebuffer")
	}
	if g.TempC < idleTempC || g.TempC > 80 {
		t.Errorf("TempC = %v, want between %v and 80", g.TempC, idleTempC)
	}
	if g.PowerW < idlePowerW || g.PowerW > 400 {
		t.Errorf("PowerW = %v, want between %v and the 400 W TDP", g.PowerW, idlePowerW)
	}
}

func TestSnapshotBusyUtilWobblesWithTime(t *testing.T) {
	nodes := []corev1.Node{gpuNode("gpu-a", 1)}
	pods := []corev1.Pod{makePod("p", "gpu-a").container("c", 1).obj()}
	seen := map[float64]bool{}
	for s := 0; s < 60; s += 5 {
		now := t0.Add(time.Duration(s) * time.Second)
		first, again := Snapshot(nodes, pods, now)[0].Util, Snapshot(nodes, pods, now)[0].Util
		if first != again {
			t.Fatalf("at %v: Util %v then %v, want the same for the same time", now, first, again)
		}
		seen[first] = true
	}
	if len(seen) < 3 {
		t.Errorf("Util took %d distinct values over a minute, want a wobble", len(seen))
	}
}

func TestSnapshotIdentity(t *testing.T) {
	nodes := []corev1.Node{gpuNode("gpu-b", 2), gpuNode("gpu-a", 2)}
	gpus := Snapshot(nodes, nil, t0)
	uuidShape := regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

	var order []string
	uuids := map[string]bool{}
	for _, g := range gpus {
		order = append(order, g.Hostname+"/"+g.Device)
		if !uuidShape.MatchString(g.UUID) {
			t.Errorf("%s/%d: UUID %q is not shaped like NVIDIA's", g.Hostname, g.Index, g.UUID)
		}
		uuids[g.UUID] = true
		if g.ModelName != "NVIDIA A100-SXM4-80GB (simulated)" {
			t.Errorf("%s/%d: modelName %q", g.Hostname, g.Index, g.ModelName)
		}
	}
	if diff := cmp.Diff([]string{"gpu-a/nvidia0", "gpu-a/nvidia1", "gpu-b/nvidia0", "gpu-b/nvidia1"}, order); diff != "" {
		t.Errorf("GPU order (-want +got):\n%s", diff)
	}
	if len(uuids) != len(gpus) {
		t.Errorf("%d distinct UUIDs for %d GPUs", len(uuids), len(gpus))
	}
	if again := Snapshot(nodes, nil, t0.Add(time.Hour)); again[0].UUID != gpus[0].UUID {
		t.Errorf("UUID changed over time: %q then %q", gpus[0].UUID, again[0].UUID)
	}
}
