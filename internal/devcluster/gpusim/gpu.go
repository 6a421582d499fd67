package gpusim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Identity of the simulated card: an 80 GiB A100 in SXM4 form, the card
// dcgm-exporter's own examples show. The model name says it is simulated so
// that no series can be mistaken for a real GPU's.
const (
	ModelName = "NVIDIA A100-SXM4-80GB (simulated)"
	// FBTotalMiB is the framebuffer of an 80 GiB card; FB_USED + FB_FREE
	// always add up to it.
	FBTotalMiB = 80 * 1024
)

// GPU is one simulated GPU at one instant: its identity, the pod container
// it is allocated to (empty strings when free) and its readings.
type GPU struct {
	// Hostname is the node's name (dcgm-exporter's Hostname label).
	Hostname string
	// Index is the GPU's minor number on its node, 0..N-1 (label gpu).
	Index     int
	UUID      string
	Device    string // "nvidia<Index>"
	ModelName string

	// Pod, Namespace and Container hold the GPU; all empty when it is free.
	Pod       string
	Namespace string
	Container string

	Util           float64 // DCGM_FI_DEV_GPU_UTIL, percent 0–100
	FBUsedMiB      float64 // DCGM_FI_DEV_FB_USED
	FBFreeMiB      float64 // DCGM_FI_DEV_FB_FREE
	TempC          float64 // DCGM_FI_DEV_GPU_TEMP
	PowerW         float64 // DCGM_FI_DEV_POWER_USAGE
	GrEngineActive float64 // DCGM_FI_PROF_GR_ENGINE_ACTIVE, ratio 0–1
}

// Allocated reports whether a pod holds the GPU.
func (g GPU) Allocated() bool { return g.Pod != "" }

// uuidFor is a stable fake UUID for GPU index of node, in the shape NVIDIA
// uses (GPU-8-4-4-4-12 hex digits), so that it survives restarts of the
// simulator and differs between nodes.
func uuidFor(node string, index int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d", node, index))
	h := hex.EncodeToString(sum[:16])
	return fmt.Sprintf("GPU-%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
}

// deviceFor is the device name dcgm-exporter reports (the /dev node).
func deviceFor(index int) string { return fmt.Sprintf("nvidia%d", index) }
