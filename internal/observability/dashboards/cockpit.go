package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// Built is one of backfill's dashboards, with the library panels it
// places, which its export variant turns into references.
type Built struct {
	// Name is the file name without .json, and the ConfigMap's name.
	Name      string
	Dashboard dashboard.Dashboard //nolint:staticcheck // the classic schema on purpose: see doc.go
	library   []libraryUse
}

// The panel ids of the cockpit, fixed so that links to a panel keep
// working across versions.
const (
	cockpitFirstStatID     uint32 = 1 // 1-6: CockpitFigures in order
	cockpitCPUID           uint32 = 10
	cockpitGPUID           uint32 = 11
	cockpitReclaimCPUID    uint32 = 12
	cockpitReclaimMemoryID uint32 = 13
	cockpitEvictionsID     uint32 = 14
	cockpitTableID         uint32 = 20
)

// statWidth is the width of each of the cockpit's Stat panels: all of
// CockpitFigures in one row of the 24 columns.
const statWidth uint32 = 4

// gpuOnlyScope says what the cockpit's namespace and tfjob variables
// filter. They narrow only the GPU panels: CPU, memory, pod counts and the
// node watermarks are the whole cluster's, because online use is every pod
// that is not offline on a node, and requests per tier have no namespace,
// so offline series of some namespaces set beside them would not add up.
const gpuOnlyScope = "Narrows only the GPU utilisation panels to these TFJobs. " +
	"CPU, memory, pod counts and the node watermarks always show the whole cluster, online and offline alike."

// Cockpit is the co-location cockpit: what online and offline work use of
// the cluster, whether training's GPUs work, and each node's watermark.
func Cockpit() (Built, error) {
	//nolint:staticcheck // the classic schema on purpose: see doc.go
	b := dashboard.NewDashboardBuilder("backfill: co-location cockpit").
		Uid("backfill-cockpit").
		Description("Online and offline (training) work on the same nodes: requests, real use, GPUs and per-node watermarks.").
		Tags([]string{"backfill", "co-location"}).
		Readonly().
		Refresh("30s").
		Time("now-1h", "now").
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(datasourceVariable()).
		WithVariable(multiVariable(VarNamespace, "namespace", "backfill_tfjob_info").
			Label("TFJob namespace (GPU panels)").Description(gpuOnlyScope)).
		WithVariable(multiVariable(VarTFJob, "tfjob", `backfill_tfjob_info{namespace=~"$namespace"}`).
			Label("TFJob (GPU panels)").Description(gpuOnlyScope))

	for i, f := range CockpitFigures() {
		b.WithPanel(statPanel(cockpitFirstStatID+uint32(i), f.Title, f.Description, f.Unit, grid(statWidth*uint32(i), 0, statWidth, 4), f.Query))
	}
	uses := []libraryUse{
		{panelID: cockpitCPUID, panel: CPUWatermarkPanel()},
		{panelID: cockpitGPUID, panel: GPUPerPodPanel()},
	}
	b.WithPanel(uses[0].panel.build(cockpitCPUID, grid(0, 4, 12, 9)))
	b.WithPanel(uses[1].panel.build(cockpitGPUID, grid(12, 4, 12, 9)))
	b.WithPanel(reclaimedCPUPanel(cockpitReclaimCPUID, grid(0, 13, 12, 9)))
	b.WithPanel(reclaimedMemoryPanel(cockpitReclaimMemoryID, grid(12, 13, 12, 9)))
	b.WithPanel(evictionsPanel(cockpitEvictionsID, grid(0, 22, 24, 6)))
	b.WithPanel(tablePanel(cockpitTableID, "Node watermarks",
		"Per node: pods, CPU and memory requested and really used by online and offline pods, the reclaimed capacity the node publishes and what offline pods hold of it, "+
			"pods by QoS class, GPUs allocated and free, and whether its reclaimed capacity is frozen on stale usage (1). "+
			"Nodes whose online use nears allocatable while offline work runs are where training will be preempted first.",
		grid(0, 28, 24, 10), "node", WatermarkColumns()))

	d, err := b.Build()
	if err != nil {
		return Built{}, fmt.Errorf("building the cockpit: %w", err)
	}
	return Built{Name: "backfill-cockpit", Dashboard: d, library: uses}, nil
}
