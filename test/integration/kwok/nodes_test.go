//go:build integration

package kwok

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

func TestNodesBecomeReadyWithTheirCapacity(t *testing.T) {
	cases := map[string]struct {
		node     string
		wantCPU  string
		wantGPUs string // "" when the node must not offer GPUs
		wantType string
	}{
		"cpu node": {node: cpuNode, wantCPU: "16", wantType: simkwok.NodeTypeCPU},
		"gpu node": {node: gpuNode, wantCPU: "96", wantGPUs: "8", wantType: simkwok.NodeTypeGPU},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			node := waitFor(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: tc.node}}, "Ready", nodeReady)

			for _, list := range []corev1.ResourceList{node.Status.Capacity, node.Status.Allocatable} {
				if got := list[corev1.ResourceCPU]; got.Cmp(resource.MustParse(tc.wantCPU)) != 0 {
					t.Errorf("cpu = %s, want %s (capacity %v, allocatable %v)", got.String(), tc.wantCPU, node.Status.Capacity, node.Status.Allocatable)
				}
				gpus, has := list[simkwok.GPUResource]
				switch {
				case tc.wantGPUs == "" && has:
					t.Errorf("a CPU node offers %s GPUs", gpus.String())
				case tc.wantGPUs != "" && gpus.Cmp(resource.MustParse(tc.wantGPUs)) != 0:
					t.Errorf("nvidia.com/gpu = %s, want %s", gpus.String(), tc.wantGPUs)
				}
			}
			if got := node.Labels[simkwok.NodeTypeLabel]; got != tc.wantType {
				t.Errorf("label %s = %q, want %q", simkwok.NodeTypeLabel, got, tc.wantType)
			}
			if !hasAddress(node, corev1.NodeInternalIP, "127.0.0.1") {
				t.Errorf("addresses = %v, want InternalIP 127.0.0.1", node.Status.Addresses)
			}
			if len(node.Spec.Taints) != 0 {
				t.Errorf("taints = %v, want none", node.Spec.Taints)
			}

			// The heartbeat: kwok holds and renews the node's Lease, as a
			// kubelet does.
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: tc.node, Namespace: corev1.NamespaceNodeLease}}
			waitFor(t, lease, "held", func(l *coordinationv1.Lease) bool {
				return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" && l.Spec.RenewTime != nil
			})
			first := lease.Spec.RenewTime.Time
			waitFor(t, lease, "renewed", func(l *coordinationv1.Lease) bool {
				return l.Spec.RenewTime.After(first)
			})
		})
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasAddress(n *corev1.Node, typ corev1.NodeAddressType, addr string) bool {
	for _, a := range n.Status.Addresses {
		if a.Type == typ && a.Address == addr {
			return true
		}
	}
	return false
}
