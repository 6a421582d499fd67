// Command podshape prints what the kubelet makes of the pod shapes a TFJob
// replica can take, computed by the kubelet's own code at the pinned
// Kubernetes version: QoS class, the pod cgroup's CPU weight and quota,
// its memory limit, and the container's OOM score adjustment. It backs
// the figures in docs/colocation.md §5 ("make pod-shape" runs it).
package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	v1qos "k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubelet/qos"
)

// nodeMemory is the node's memory capacity, which the OOM score of a
// Burstable container is scaled by: that of the suites' nodes.
const nodeMemory = 64 << 30

type shape struct {
	name      string
	resources corev1.ResourceRequirements
}

func list(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

func main() {
	// The template asks for cpu 1 / memory 1Gi with limits cpu 2 /
	// memory 2Gi; these are the shapes of its pod.
	shapes := []shape{
		{"online web pod (Burstable, requests 4 CPU / 8Gi)", corev1.ResourceRequirements{
			Requests: list("cpu", "4", "memory", "8Gi"), Limits: list("cpu", "8", "memory", "16Gi")}},
		{"training on requested capacity (the template as is)", corev1.ResourceRequirements{
			Requests: list("cpu", "1", "memory", "1Gi"), Limits: list("cpu", "2", "memory", "2Gi")}},
		{"reclaimed, batch resources only (before)", corev1.ResourceRequirements{
			Requests: list("backfill.dev/batch-cpu", "1000", "backfill.dev/batch-memory", "1Gi"),
			Limits:   list("backfill.dev/batch-cpu", "1000", "backfill.dev/batch-memory", "1Gi")}},
		{"reclaimed, zero requests + template limits (now)", corev1.ResourceRequirements{
			Requests: list("backfill.dev/batch-cpu", "1000", "backfill.dev/batch-memory", "1Gi", "cpu", "0", "memory", "0"),
			Limits:   list("backfill.dev/batch-cpu", "1000", "backfill.dev/batch-memory", "1Gi", "cpu", "2", "memory", "2Gi")}},
		{"reclaimed, zero requests, template without limits (now)", corev1.ResourceRequirements{
			Requests: list("backfill.dev/batch-cpu", "1000", "backfill.dev/batch-memory", "1Gi", "cpu", "0", "memory", "0"),
			Limits:   list("backfill.dev/batch-cpu", "1000", "backfill.dev/batch-memory", "1Gi")}},
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "shape\tQoS\tpod cpu.shares\tcpu.weight (v2)\tcfs_quota_us\tmemory limit\toom_score_adj")
	for _, s := range shapes {
		pod := &corev1.Pod{
			ObjectMeta: metaFor(s.name),
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: s.resources}}},
		}
		class := v1qos.GetPodQOS(pod)
		pod.Status.QOSClass = class
		cfg := cm.ResourceConfigForPod(pod, true, 100000, false, kubeletconfig.NoneMemoryReservationPolicy)
		memory := "none"
		if cfg.Memory != nil {
			memory = resource.NewQuantity(*cfg.Memory, resource.BinarySI).String()
		}
		quota := "none"
		if cfg.CPUQuota != nil && *cfg.CPUQuota > 0 {
			quota = fmt.Sprint(*cfg.CPUQuota)
		}
		shares := uint64(0)
		if cfg.CPUShares != nil {
			shares = *cfg.CPUShares
		}
		oom := qos.GetContainerOOMScoreAdjust(pod, &pod.Spec.Containers[0], nodeMemory)
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\t%d\n", s.name, class, shares, sharesToWeight(shares), quota, memory, oom)
	}
	_ = w.Flush()
}

// sharesToWeight is the cgroup v2 cpu.weight that runc writes for v1
// shares: 1 + ((shares - 2) * 9999) / 262142.
func sharesToWeight(shares uint64) uint64 {
	if shares == 0 {
		return 0
	}
	return 1 + ((shares-2)*9999)/262142
}

func metaFor(name string) (m metav1.ObjectMeta) {
	m.Name = "shape"
	m.UID = types.UID(name)
	return m
}
