package colocation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Resources are amounts of CPU, in milli-CPU, memory, in bytes, and
// NVIDIA GPUs, in devices: the units of ResourceBatchCPU and
// ResourceBatchMemory, and of the nodes' and pods' resources backfill
// counts. Reclaimed capacity is CPU and memory only; its amounts have no
// GPUs.
type Resources struct {
	MilliCPU int64 `json:"cpu"`
	Memory   int64 `json:"memory"`
	GPU      int64 `json:"gpu,omitempty"`
}

// Add is r + o.
func (r Resources) Add(o Resources) Resources {
	return Resources{r.MilliCPU + o.MilliCPU, r.Memory + o.Memory, r.GPU + o.GPU}
}

// Sub is r - o, which may be negative.
func (r Resources) Sub(o Resources) Resources {
	return Resources{r.MilliCPU - o.MilliCPU, r.Memory - o.Memory, r.GPU - o.GPU}
}

// Max is the larger of r and o, per resource.
func (r Resources) Max(o Resources) Resources {
	return Resources{max(r.MilliCPU, o.MilliCPU), max(r.Memory, o.Memory), max(r.GPU, o.GPU)}
}

// Min is the smaller of r and o, per resource.
func (r Resources) Min(o Resources) Resources {
	return Resources{min(r.MilliCPU, o.MilliCPU), min(r.Memory, o.Memory), min(r.GPU, o.GPU)}
}

// NonNegative is r with negative amounts raised to 0.
func (r Resources) NonNegative() Resources { return r.Max(Resources{}) }

// Percent is cpu percent of r's CPU and memory percent of its memory,
// rounded down, and no GPUs.
func (r Resources) Percent(cpu, memory int) Resources {
	return Resources{MilliCPU: r.MilliCPU * int64(cpu) / 100, Memory: r.Memory * int64(memory) / 100}
}

// CPUAndMemory is r without its GPUs: what reclaimed capacity counts.
func (r Resources) CPUAndMemory() Resources {
	return Resources{MilliCPU: r.MilliCPU, Memory: r.Memory}
}

// IsZero reports whether both amounts are 0.
func (r Resources) IsZero() bool { return r == Resources{} }

// Covers reports whether r is at least o in every resource.
func (r Resources) Covers(o Resources) bool {
	return r.MilliCPU >= o.MilliCPU && r.Memory >= o.Memory && r.GPU >= o.GPU
}

// String writes r as Kubernetes quantities, e.g. "cpu 7300m, memory 12Gi",
// and its GPUs when it has any.
func (r Resources) String() string {
	s := fmt.Sprintf("cpu %s, memory %s", CPUString(r.MilliCPU), MemoryString(r.Memory))
	if r.GPU != 0 {
		s += fmt.Sprintf(", nvidia.com/gpu %d", r.GPU)
	}
	return s
}

// CPUString writes milli-CPU as a quantity: "7300m", "8".
func CPUString(milli int64) string {
	return resource.NewMilliQuantity(milli, resource.DecimalSI).String()
}

// MemoryString writes bytes as a binary quantity where it is exact, e.g.
// "12Gi", else in Gi to a tenth, e.g. "12.8Gi".
func MemoryString(bytes int64) string {
	if bytes%(1<<20) == 0 {
		return resource.NewQuantity(bytes, resource.BinarySI).String()
	}
	return fmt.Sprintf("%.1fGi", float64(bytes)/(1<<30))
}
