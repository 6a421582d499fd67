package rules

import (
	"fmt"
	"time"

	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// Thresholds of the training alerts, as docs/observability.md states them.
const (
	// GoodputLowRatio: a job that kept less than half of its time since it
	// first ran, for GoodputLowFor, loses more to disruptions than it
	// trains.
	GoodputLowRatio = 0.5
	GoodputLowFor   = 30 * time.Minute
	// GoodputLowAfter is the time since its first run a job must have
	// before the ratio means anything: one disruption in a job's first
	// minutes is most of a short life. With GoodputLowFor, the alert fires
	// at the earliest 90 minutes after the job first ran.
	GoodputLowAfter = time.Hour
	// GPUMemoryFullRatio of a GPU's memory in use, for GPUMemoryFullFor,
	// leaves no room for a larger batch or a leak's next step.
	GPUMemoryFullRatio = 0.95
	GPUMemoryFullFor   = 15 * time.Minute
)

// goodputLow: of a job's time since it first ran, productive over
// productive + progress_lost + recovery. Waiting before the first run is
// left out: a backfill job waits for idle capacity by design, and a job
// that waited two hours and then trained an hour without a hitch would
// read 33% for hours; BackfillTFJobPendingTooLong reports the waiting.
// Restarting counts as running, so that a job going back and forth
// between the two keeps its alert pending rather than starting over.
func goodputLow() Alert {
	productive := fmt.Sprintf(`sum by (namespace, tfjob) (%s)`, expr.GoodputByCause(fmt.Sprintf("cause=%q", metrics.GoodputProductive)))
	sinceRun := fmt.Sprintf(`sum by (namespace, tfjob) (%s)`, expr.GoodputByCause(fmt.Sprintf("cause!=%q", metrics.GoodputWaiting)))
	return Alert{
		Name: "BackfillTFJobGoodputLow",
		Expr: fmt.Sprintf(`(%s / %s < %v) and on (namespace, tfjob) (%s >= %d) and on (namespace, tfjob) %s{phase=~"Running|Restarting"}`,
			productive, sinceRun, GoodputLowRatio, sinceRun, int(GoodputLowAfter.Seconds()), metrics.NameJobInfo),
		For:      GoodputLowFor,
		Severity: SeverityWarning,
		// A tuning signal whose normal level depends on the cluster.
		Profile: ProfileFull,
		Summary: "TFJob {{ $labels.namespace }}/{{ $labels.tfjob }} keeps little of its training",
		Description: "Only {{ $value | humanizePercentage }} of TFJob {{ $labels.namespace }}/{{ $labels.tfjob }}'s time since it first ran " +
			fmt.Sprintf("kept its progress, less than %.0f%% for %s: ", GoodputLowRatio*100, words(GoodputLowFor)) +
			"the rest went to training that disruptions and restarts undid back to the last checkpoint, and to recovering from them.",
	}
}

// gpuMemoryNearFull: a TFJob pod's GPU whose memory is nearly all in use.
// Per GPU, not per pod: memory runs out on one card.
func gpuMemoryNearFull() Alert {
	return Alert{
		Name: "BackfillTFJobGPUMemoryNearFull",
		Expr: fmt.Sprintf(`(%s) > %v and on (namespace, pod) %s{tfjob!=""}`,
			expr.OfflineGPUMemoryFullByGPU(), GPUMemoryFullRatio, metrics.NameOfflinePodInfo),
		For:      GPUMemoryFullFor,
		Severity: SeverityWarning,
		// TensorFlow takes nearly all of a GPU's memory at start, so most jobs would fire it.
		Profile: ProfileFull,
		Summary: "GPU memory of TFJob {{ $labels.namespace }}/{{ $labels.tfjob }} is nearly full",
		Description: "GPU {{ $labels.gpu }} ({{ $labels.UUID }}) of pod {{ $labels.namespace }}/{{ $labels.pod }} on node {{ $labels.node }} " +
			fmt.Sprintf("has had more than %.0f%% of its memory in use for %s (now {{ $value | humanizePercentage }}): ", GPUMemoryFullRatio*100, words(GPUMemoryFullFor)) +
			"a larger batch, a longer sequence or a leak runs it out of memory and fails the replica. " +
			"TensorFlow takes nearly all of a GPU's memory at start unless TF_FORCE_GPU_ALLOW_GROWTH=true: see the runbook.",
	}
}
