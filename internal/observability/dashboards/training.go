package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// Whether training makes progress and fits its GPUs: the goodput account
// the manager exports per TFJob, and dcgm-exporter's framebuffer memory of
// the TFJob pods' GPUs.

// selectedJobs matches the TFJobs the cockpit's multi-value variables
// select.
const selectedJobs = `namespace=~"$namespace",tfjob=~"$tfjob"`

// productive selects the productive cause of the goodput account.
var productive = fmt.Sprintf("cause=%q", metrics.GoodputProductive)

// goodputPercent is the productive share, in percent, of the whole life of
// the TFJobs jobMatchers selects, summed over them: every cause counts,
// waiting included, as progress.Totals.Ratio does. A job with no time yet
// (0 of 0) gives no value rather than NaN.
func goodputPercent(jobMatchers string) string {
	return fmt.Sprintf("100 * sum(%s) / (sum(%s) > 0)",
		expr.GoodputByCause(jobMatchers+","+productive), expr.GoodputByCause(jobMatchers))
}

// JobGoodput is the TFJob dashboard's Goodput stat: the productive share
// of the job's life.
func JobGoodput() Query {
	return Query{Expr: goodputPercent(jobSelector), Legend: "goodput"}
}

// JobGoodputByCause is the TFJob dashboard's time by cause: the job's
// life so far in seconds, one series per cause.
func JobGoodputByCause() Query {
	return Query{Expr: expr.GoodputByCause(jobSelector), Legend: "{{cause}}"}
}

// TrainingGoodput is the cockpit's Training goodput stat: the productive
// share of the life of every selected TFJob, summed over them, so that
// long jobs weigh more. Finished jobs count until they are deleted.
func TrainingGoodput() Query {
	return Query{Expr: goodputPercent(selectedJobs), Legend: "training goodput"}
}

// selectedPods scopes a per-GPU expression of offline pods (package expr's
// Offline…ByGPU) to the pods of the selected TFJobs.
func selectedPods(offlineByGPU string) string {
	return "(" + offlineByGPU + ") and on (namespace, pod) " + offlinePodsSelected
}

// podLegend names a series of one TFJob pod, as the GPU library panel does.
const podLegend = "{{namespace}}/{{pod}} ({{replica_type}})"

// GPUMemoryUsedByTFJobPod is the GPU memory, in bytes, each selected TFJob
// pod uses on all its GPUs together.
func GPUMemoryUsedByTFJobPod() Query {
	return Query{
		Expr:   fmt.Sprintf("%d * sum by (namespace, tfjob, replica_type, pod) (%s)", expr.MiB, selectedPods(expr.OfflineGPUMemoryUsedByGPU())),
		Legend: podLegend,
	}
}

// GPUMemoryFullByTFJobPod is, for each selected TFJob pod, the share of
// memory in use of its fullest GPU, in percent: memory runs out on one
// card, not on the pod's average.
func GPUMemoryFullByTFJobPod() Query {
	return Query{
		Expr:   "100 * max by (namespace, tfjob, replica_type, pod) (" + selectedPods(expr.OfflineGPUMemoryFullByGPU()) + ")",
		Legend: podLegend,
	}
}

// goodputThresholds colour a goodput in percent: red under half, yellow
// under four fifths, green above. Without them Grafana's default turns a
// stat red above 80, the wrong way round for a share that should be high.
func goodputThresholds() *dashboard.ThresholdsConfigBuilder {
	return dashboard.NewThresholdsConfigBuilder().
		Mode(dashboard.ThresholdsModeAbsolute).
		Steps([]dashboard.Threshold{
			{Color: "red"},
			{Value: cog.ToPtr(50.0), Color: "yellow"},
			{Value: cog.ToPtr(80.0), Color: "green"},
		})
}

// goodputStat shows a goodput query as a percentage coloured by
// goodputThresholds.
func goodputStat(id uint32, title, description string, pos dashboard.GridPos, q Query) *stat.PanelBuilder {
	return statPanel(id, title, description, UnitPercent, pos, q).
		Min(0).
		Max(100).
		Thresholds(goodputThresholds()).
		ColorMode(common.BigValueColorModeValue)
}

// causeColours give each cause of the goodput account one colour wherever
// it is drawn.
var causeColours = map[string]string{
	metrics.GoodputProductive:   "green",
	metrics.GoodputProgressLost: "red",
	metrics.GoodputRecovery:     "orange",
	metrics.GoodputWaiting:      "blue",
}

// goodputByCausePanel stacks the job's time by cause: the top of the stack
// is its age, the green part what it kept.
func goodputByCausePanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	panel := timeSeriesPanel(id, "Goodput: time by cause",
		"The TFJob's life so far by cause, stacked (backfill_tfjob_goodput_seconds): productive training that kept its progress, "+
			"progress_lost (training a disruption, restart or suspension undid back to the last checkpoint), recovery (from a disruption or restart until every replica ran again) "+
			"and waiting (for capacity before the job first ran). The top of the stack is the job's age; it stops growing when the job finishes. "+
			"A red band that grows at each disruption means checkpoints too far apart; a wide orange one, slow recoveries.",
		UnitSeconds, pos, []Query{JobGoodputByCause()}).
		Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal).Group("A")).
		FillOpacity(40).
		Min(0)
	for _, cause := range metrics.GoodputCauses {
		panel.OverrideByName(cause, []dashboard.DynamicConfigValue{
			{Id: "color", Value: map[string]any{"mode": "fixed", "fixedColor": causeColours[cause]}},
		})
	}
	return panel
}

// gpuMemoryUsedPanel is the GPU memory each pod of the job holds.
func gpuMemoryUsedPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	return timeSeriesPanel(id, "GPU memory used per TFJob pod",
		"Framebuffer memory each pod of the job uses on all its GPUs together (dcgm-exporter DCGM_FI_DEV_FB_USED). "+
			"Works whether dcgm-exporter's pod labels arrive as pod or as exported_pod.",
		UnitBytes, pos, []Query{GPUMemoryUsedByTFJobPod()}).
		Min(0)
}

// gpuMemoryFullPanel is how close each pod of the job is to running out
// of GPU memory.
func gpuMemoryFullPanel(id uint32, pos dashboard.GridPos) *timeseries.PanelBuilder {
	return timeSeriesPanel(id, "GPU memory in use per TFJob pod",
		"Of each pod's fullest GPU, the share of memory in use: DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE). "+
			"Near 100% the next larger batch or model runs out of memory. TensorFlow maps nearly all of a GPU's memory at start "+
			"unless the job sets TF_FORCE_GPU_ALLOW_GROWTH=true, so without it this reads near 100% whatever the model needs.",
		UnitPercent, pos, []Query{GPUMemoryFullByTFJobPod()}).
		Min(0).
		Max(100)
}
