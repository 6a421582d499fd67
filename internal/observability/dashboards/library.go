package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// LibraryPanel is a panel meant for reuse: the provisioned dashboards
// carry it inline (a provisioned dashboard cannot create library panels,
// and a reference to a missing one shows an error), the export variant
// references it by uid and ships its model in __elements, from which
// Grafana creates it on import.
type LibraryPanel struct {
	UID  string
	Name string
	// build returns the panel with the given id and position.
	build func(id uint32, pos dashboard.GridPos) cog.Builder[dashboard.Panel]
}

// libraryUse is a library panel placed in a dashboard under a panel id.
type libraryUse struct {
	panelID uint32
	panel   LibraryPanel
}

// CPUWatermarkPanel is online and offline CPU use stacked against
// requests and allocatable: how close the cluster runs to its watermark.
func CPUWatermarkPanel() LibraryPanel {
	return LibraryPanel{UID: "backfill-cpu-watermark", Name: "backfill: CPU by tier", build: cpuWatermark}
}

func cpuWatermark(id uint32, pos dashboard.GridPos) cog.Builder[dashboard.Panel] {
	line := []dashboard.DynamicConfigValue{
		{Id: "custom.stacking", Value: map[string]any{"mode": string(common.StackingModeNone), "group": "A"}},
		{Id: "custom.fillOpacity", Value: 0},
		{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
	}
	panel := timeSeriesPanel(id, "CPU by tier",
		"CPU cores used by online and offline pods, stacked, against what each tier requests and what the nodes can allocate. "+
			"Offline use filling the gap between online use and allocatable is the capacity backfill reclaims.",
		UnitCores, pos, CPUByTier()).
		Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal).Group("A")).
		FillOpacity(30).
		Min(0)
	for _, q := range CPUByTier()[2:] {
		panel.OverrideByName(q.Legend, line)
	}
	return panel
}

// GPUPerPodPanel is the GPU utilisation of each pod of the selected
// TFJobs over time.
func GPUPerPodPanel() LibraryPanel {
	return LibraryPanel{UID: "backfill-gpu-per-pod", Name: "backfill: GPU utilisation per TFJob pod", build: gpuPerPod}
}

func gpuPerPod(id uint32, pos dashboard.GridPos) cog.Builder[dashboard.Panel] {
	return timeSeriesPanel(id, "GPU utilisation per TFJob pod",
		"Average utilisation (dcgm-exporter DCGM_FI_DEV_GPU_UTIL, 0-100) of the GPUs each pod of the selected TFJobs holds. "+
			"Works whether dcgm-exporter's pod labels arrive as pod or as exported_pod.",
		UnitPercent, pos, []Query{GPUUtilByTFJobPod()}).
		Min(0).
		Max(100)
}
