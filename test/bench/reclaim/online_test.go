package main

import (
	"math"
	"testing"
)

func TestTracesUseAQuarterOfCapacityOnADiurnalCurve(t *testing.T) {
	spec := defaultNodeSpec()
	tr := newTraces(spec, 20, 7*minutesPerDay, 1, profiles[0])
	var cpu, memory, night, afternoon float64
	for i := range tr.cpu {
		if share := tr.requests[i].cpu / spec.capacity.cpu; share < requestShareMin || share > requestShareMax {
			t.Errorf("node %d: online requests %.0f%% of capacity, want 65-75%%", i, 100*share)
		}
		cpu += mean(tr.cpu[i])
		memory += mean(tr.memory[i])
		for m, v := range tr.cpu[i] {
			switch hour := m % minutesPerDay / 60; {
			case hour >= 2 && hour < 4:
				night += v
			case hour >= 14 && hour < 16:
				afternoon += v
			}
		}
	}
	n := float64(len(tr.cpu))
	if share := cpu / n / spec.capacity.cpu; share < 0.22 || share > 0.28 {
		t.Errorf("online CPU use averages %.1f%% of capacity, want about 25%%", 100*share)
	}
	if share := memory / n / spec.capacity.memory; share < 0.22 || share > 0.28 {
		t.Errorf("online memory use averages %.1f%% of capacity, want about 25%%", 100*share)
	}
	if afternoon < 1.3*night {
		t.Errorf("afternoon CPU use is %.2f x the night's, want a diurnal curve peaking in the afternoon", afternoon/night)
	}
}

func TestMemoryMovesSlowerThanCPU(t *testing.T) {
	tr := newTraces(defaultNodeSpec(), 5, 2*minutesPerDay, 1, profiles[0])
	for i := range tr.cpu {
		cpu, memory := meanStep(tr.cpu[i]), meanStep(tr.memory[i])
		if memory > cpu/2 {
			t.Errorf("node %d: memory moves %.3f of its level a minute, CPU %.3f: want memory at most half as fast", i, memory, cpu)
		}
	}
}

// meanStep is the mean minute-to-minute change relative to the mean level.
func meanStep(xs []float64) float64 {
	sum := 0.0
	for m := 1; m < len(xs); m++ {
		sum += math.Abs(xs[m] - xs[m-1])
	}
	return sum / float64(len(xs)-1) / mean(xs)
}

func TestPeakAndAverageLookBackOverTheWindow(t *testing.T) {
	tr := &traces{cpu: [][]float64{{1, 5, 2, 3, 4}}, memory: [][]float64{{10, 10, 40, 20, 20}}}
	if got, want := tr.peak(0, 4, 3), (resources{cpu: 4, memory: 40}); got != want {
		t.Errorf("peak over the last 3 minutes = %+v, want %+v", got, want)
	}
	if got, want := tr.peak(0, 1, 15), (resources{cpu: 5, memory: 10}); got != want {
		t.Errorf("peak of a history shorter than the window = %+v, want %+v", got, want)
	}
	if got, want := tr.average(0, 4, 2), (resources{cpu: 3.5, memory: 20}); got != want {
		t.Errorf("average over the last 2 minutes = %+v, want %+v", got, want)
	}
}
