//go:build integration

package metricsserver

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/backfill-dev/backfill/internal/colocation"
	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

const (
	namespace = "metrics-server-suite"
	// busyNode runs an online and an offline pod, quietNode one online pod.
	busyNode  = "sim-busy-0"
	quietNode = "sim-quiet-0"
)

// fixturePod is one of the suite's pods: where it runs, its tier and what
// its single container uses (kwok's usage annotations).
type fixturePod struct {
	name, node  string
	offline     bool
	cpu, memory string
}

// fixturePods are created once for the whole suite: metrics-server needs
// two to three scrapes before a new pod's metrics show.
var fixturePods = []fixturePod{
	{name: "web", node: busyNode, cpu: "1500m", memory: "2Gi"},
	{name: "trainer", node: busyNode, offline: true, cpu: "700m", memory: "1Gi"},
	{name: "api", node: quietNode, cpu: "300m", memory: "512Mi"},
}

// object is the pod, bound to its node directly: no scheduler runs here.
func (p fixturePod) object() *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      p.name,
			Namespace: namespace,
			Annotations: map[string]string{
				simkwok.UsageCPUAnnotation:    p.cpu,
				simkwok.UsageMemoryAnnotation: p.memory,
			},
		},
		Spec: corev1.PodSpec{
			NodeName:      p.node,
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "registry.invalid/backfill/app:never-pulled",
			}},
		},
	}
	if p.offline {
		pod.Labels = map[string]string{colocation.TierLabel: string(colocation.TierOffline)}
	}
	return pod
}

// usage is what the pod's container uses by its annotations.
func (p fixturePod) usage() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(p.cpu),
		corev1.ResourceMemory: resource.MustParse(p.memory),
	}
}

// nodeUsage is what the fixture pods on node use together; with
// onlineOnly, only those of the online tier.
func nodeUsage(node string, onlineOnly bool) corev1.ResourceList {
	cpu, memory := resource.Quantity{}, resource.Quantity{}
	for _, p := range fixturePods {
		if p.node != node || (onlineOnly && p.offline) {
			continue
		}
		u := p.usage()
		cpu.Add(u[corev1.ResourceCPU])
		memory.Add(u[corev1.ResourceMemory])
	}
	return corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory}
}
