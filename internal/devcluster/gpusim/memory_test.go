package gpusim

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/observability/rules"
)

// TestSnapshotMemory checks the framebuffer readings the GPU memory panels
// and BackfillTFJobGPUMemoryNearFull read: a training pod's GPU holds most
// of its memory yet stays under the alert's threshold, so the local
// cluster is quiet unless a pod stages a full GPU with MemoryAnnotation.
func TestSnapshotMemory(t *testing.T) {
	nodes := []corev1.Node{gpuNode("gpu-a", 1)}
	threshold := rules.GPUMemoryFullRatio
	cases := map[string]struct {
		pods     []corev1.Pod
		min, max float64 // share of memory in use, 0–1, inclusive
	}{
		"a free GPU holds nothing": {
			min: 0, max: 0,
		},
		"a training GPU holds most of its memory, under the alert's threshold": {
			pods: []corev1.Pod{makePod("p", "gpu-a").container("c", 1).obj()},
			min:  0.5, max: threshold - 0.05,
		},
		"an idle training GPU still holds its model": {
			pods: []corev1.Pod{makePod("p", "gpu-a").container("c", 1).annotate(UtilAnnotation, "0").obj()},
			min:  heldFBShare, max: heldFBShare,
		},
		"the annotation stages a nearly full GPU": {
			pods: []corev1.Pod{makePod("p", "gpu-a").container("c", 1).annotate(MemoryAnnotation, "98.75").obj()},
			min:  0.9875, max: 0.9875,
		},
		"the annotation above 100 is clamped": {
			pods: []corev1.Pod{makePod("p", "gpu-a").container("c", 1).annotate(MemoryAnnotation, "150").obj()},
			min:  1, max: 1,
		},
		"the annotation that is not a number is ignored": {
			pods: []corev1.Pod{makePod("p", "gpu-a").container("c", 1).annotate(MemoryAnnotation, "full").obj()},
			min:  0.5, max: threshold - 0.05,
		},
		"the annotation of a pod holding no GPU changes nothing": {
			pods: []corev1.Pod{makePod("p", "gpu-a").container("c", 0).annotate(MemoryAnnotation, "99").obj()},
			min:  0, max: 0,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for s := 0; s < 60; s += 5 {
				g := Snapshot(nodes, tc.pods, t0.Add(time.Duration(s)*time.Second))[0]
				share := g.FBUsedMiB / (g.FBUsedMiB + g.FBFreeMiB)
				if share < tc.min || share > tc.max {
					t.Fatalf("at %ds: %v of %v MiB in use (%.4f), want %.4f to %.4f", s, g.FBUsedMiB, g.FBUsedMiB+g.FBFreeMiB, share, tc.min, tc.max)
				}
				checkConsistent(t, g)
			}
		})
	}
}

// TestSnapshotMemoryVaries wants a training GPU's memory to move a little
// with its steps, so that the memory panels are not flat lines.
func TestSnapshotMemoryVaries(t *testing.T) {
	nodes := []corev1.Node{gpuNode("gpu-a", 1)}
	pods := []corev1.Pod{makePod("p", "gpu-a").container("c", 1).obj()}
	seen := map[float64]bool{}
	for s := 0; s < 60; s += 5 {
		seen[Snapshot(nodes, pods, t0.Add(time.Duration(s)*time.Second))[0].FBUsedMiB] = true
	}
	if len(seen) < 3 {
		t.Errorf("FB used took %d distinct values over a minute, want it to vary", len(seen))
	}
}
