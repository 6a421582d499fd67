//go:build linux

package nodeagent

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/backfill-dev/backfill/internal/colocation"
)

// TestRealCgroupResize resizes a reclaimed pod in place on this machine's
// own cgroups, as the kubelet and its runtime write them, while the agent
// caps it and keeps it in the idle class. The kernel refuses a cpu.shares
// (v2: cpu.weight) write to an idle cgroup, and on cgroup v1 a container's
// quota above its pod's: the agent takes the pod out of the idle class
// once its spec asks for new resources, and lifts its ceiling while the
// kubelet applies them, so that every write of the kubelet succeeds; once
// the resize has settled, the pod is capped and idle again.
func TestRealCgroupResize(t *testing.T) {
	n := newRealNode(t)
	const cid = "7c6b5a4d3e2f10ffeeddccbbaa99887766554433221100ffeeddccbbaa998877"
	pod := reclaimedPod("1", "1500m", cid)
	group := n.fs.PodGroup(corev1.PodQOSBurstable, pod.UID)
	container := path.Join(group, cid)
	n.makeGroup(t, "", n.weights(2048, -1))
	n.makeGroup(t, n.fs.QOSGroup(corev1.PodQOSBurstable), n.weights(1024, -1))
	n.makeGroup(t, group, n.weights(1024, 150_000))
	n.makeGroup(t, container, n.weights(1024, 150_000))
	if _, err := os.Stat(filepath.Join(n.cpuDir(group), "cpu.idle")); err != nil {
		t.Skipf("the kernel has no cpu.idle (Linux 5.15 or later has it): %v", err)
	}

	pods := &podList{}
	pods.set(podOf(pod, ""))
	// Offline may use what the machine's other work leaves below half of
	// it, at least a quarter: always under the pod's limits below.
	agent, err := New(Config{FS: n.fs, Pods: pods, Log: testr.New(t),
		Settings: Settings{Interval: time.Second, CPUThreshold: 50, CPUFloor: 25, CPUGrowth: 10, CPUReleaseTicks: 1, CPUIdle: true}})
	if err != nil {
		t.Fatal(err)
	}
	settle := func(when string) {
		t.Helper()
		tick(t, agent)
		tick(t, agent)
		if q := n.quotaRaw(t, group); q < 0 || q > 100_000 || !n.idle(t, group) {
			t.Fatalf("%s: the pod's quota %d µs, idle %t; want a ceiling of at most 1 core, and idle", when, q, n.idle(t, group))
		}
	}
	settle("capped")

	// The kernel's refusals, as the kubelet meets them with no agent's
	// help.
	if err := n.kubeletWrites(group, 2048, 200_000); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("the kubelet's writes to an idle pod cgroup: %v, want EINVAL", err)
	}
	if n.fs.Version == 1 {
		if err := n.kubeletWrites(container, 1024, 200_000); !errors.Is(err, syscall.EINVAL) {
			t.Fatalf("a container's quota above its capped pod's: %v, want EINVAL", err)
		}
	}

	// Up to 2 cores: the spec asks, the kubelet writes the pod first.
	pod = reclaimedPod("2", "2", cid)
	pod.Status.ContainerStatuses[0].Resources = resourcesOf("1", "1500m")
	pods.set(podOf(pod, ""))
	tick(t, agent)
	for _, w := range []struct {
		group         string
		shares, quota int64
	}{{group, 2048, 200_000}, {container, 2048, 200_000}} {
		if err := n.kubeletWrites(w.group, w.shares, w.quota); err != nil {
			t.Errorf("the kubelet's resize to 2 cores, after the agent's tick: %v", err)
		}
	}
	pod.Status.ContainerStatuses[0].Resources = resourcesOf("2", "2")
	pods.set(podOf(pod, ""))
	settle("resized to 2 cores")

	// Down to 1.2 cores, which the kubelet applies: containers first,
	// whose new quota is above the pod's ceiling.
	pod = reclaimedPod("1", "1200m", cid)
	pod.Status.ContainerStatuses[0].Resources = resourcesOf("2", "2")
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue}}
	pods.set(podOf(pod, ""))
	tick(t, agent)
	for _, w := range []struct {
		group         string
		shares, quota int64
	}{{container, 1024, 120_000}, {group, 1024, 120_000}} {
		if err := n.kubeletWrites(w.group, w.shares, w.quota); err != nil {
			t.Errorf("the kubelet's resize to 1.2 cores, after the agent's tick: %v", err)
		}
	}
	pod.Status.ContainerStatuses[0].Resources = resourcesOf("1", "1200m")
	pod.Status.Conditions = nil
	pods.set(podOf(pod, ""))
	settle("resized to 1.2 cores")

	if err := agent.letGo(); err != nil {
		t.Fatalf("lifting at the end: %v", err)
	}
	if q := n.quotaRaw(t, group); q != 120_000 || n.idle(t, group) {
		t.Errorf("after the agent let go: quota %d, idle %t; want the kubelet's 120000 and not idle", q, n.idle(t, group))
	}
}

// reclaimedPod is a Burstable offline pod on reclaimed capacity of one
// container, asking for request and limit of CPU, running as the kubelet
// reports it.
func reclaimedPod(request, limit, containerID string) *corev1.Pod {
	r := resourcesOf(request, limit)
	r.Requests[colocation.ResourceBatchCPU] = resource.MustParse("1000")
	r.Limits[colocation.ResourceBatchCPU] = resource.MustParse("1000")
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train-worker-0", UID: "3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7",
			Labels: map[string]string{colocation.TierLabel: string(colocation.TierOffline)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: *r}}},
		Status: corev1.PodStatus{QOSClass: corev1.PodQOSBurstable, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "tensorflow", ContainerID: "containerd://" + containerID, Resources: resourcesOf(request, limit)}}},
	}
}

func resourcesOf(request, limit string) *corev1.ResourceRequirements {
	return &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(request)},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(limit)},
	}
}

// kubeletWrites writes a cgroup's CPU weight, then its quota, as the
// kubelet (a pod's cgroup) and the runtime (a container's) write them on a
// resize.
func (n *realNode) kubeletWrites(group string, shares, quota int64) error {
	files := n.weights(shares, quota)
	for _, name := range []string{"cpu.shares", "cpu.weight", "cpu.cfs_quota_us", "cpu.max"} {
		if value, ok := files[name]; ok {
			if err := writeFile(filepath.Join(n.cpuDir(group), name), value); err != nil {
				return fmt.Errorf("write %s=%s of %s: %w", name, value, group, err)
			}
		}
	}
	return nil
}

// idle reports whether group is in the scheduler's idle class.
func (n *realNode) idle(t *testing.T, group string) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.cpuDir(group), "cpu.idle"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b)) == "1"
}
