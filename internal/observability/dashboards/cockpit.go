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
	cockpitFirstStatID      uint32 = 1 // 1-6: CockpitFigures in order
	cockpitCPUID            uint32 = 10
	cockpitGPUID            uint32 = 11
	cockpitReclaimCPUID     uint32 = 12
	cockpitReclaimMemoryID  uint32 = 13
	cockpitEvictionsID      uint32 = 14
	cockpitGoodputID        uint32 = 15
	cockpitAgentCPUID       uint32 = 16
	cockpitOnlineWaitID     uint32 = 17
	cockpitThrottledID      uint32 = 18
	cockpitAgentEvictID     uint32 = 19
	cockpitTableID          uint32 = 20
	cockpitOnlineRowID      uint32 = 21
	cockpitOnlineP99ID      uint32 = 22
	cockpitOnlinePeersID    uint32 = 23
	cockpitOnlinePressureID uint32 = 24
	cockpitOnlineHeldID     uint32 = 25
	cockpitOnlineActionsID  uint32 = 26
	cockpitGPUIdleRowID     uint32 = 27
	cockpitGPUIdleTableID   uint32 = 28
	cockpitGPUIdleTrendID   uint32 = 29
	cockpitGPULoanRowID     uint32 = 30
	cockpitGPULoanLentID    uint32 = 31
	cockpitGPULoanReturnID  uint32 = 32
	cockpitGPULoanTrendID   uint32 = 33
	cockpitGPULoanTableID   uint32 = 34
	cockpitGPULoanWaitID    uint32 = 35
)

// statWidth is the width of each of the cockpit's Stat panels: all of
// CockpitFigures in one row of the 24 columns.
const statWidth uint32 = 4

// trainingOnlyScope says what the cockpit's namespace and tfjob variables
// filter. They narrow only the training panels (GPU utilisation, training
// goodput): CPU, memory, pod counts and the node watermarks are the whole
// cluster's, because online use is every pod that is not offline on a
// node, and requests per tier have no namespace, so offline series of some
// namespaces set beside them would not add up.
const trainingOnlyScope = "Narrows only the GPU utilisation and training goodput panels to these TFJobs. " +
	"CPU, memory, pod counts and the node watermarks always show the whole cluster, online and offline alike."

// Cockpit is the co-location cockpit: what online and offline work use of
// the cluster, whether training's GPUs work, and each node's watermark.
func Cockpit() (Built, error) {
	//nolint:staticcheck // the classic schema on purpose: see doc.go
	b := dashboard.NewDashboardBuilder("backfill: co-location cockpit").
		Uid("backfill-cockpit").
		Description("Online and offline (training) work on the same nodes: requests, real use, GPUs, the node agents, per-node watermarks, whether co-location hurts online latency, and the GPUs online work lends to training.").
		Tags([]string{"backfill", "co-location"}).
		Readonly().
		Refresh("30s").
		Time("now-1h", "now").
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(datasourceVariable()).
		WithVariable(multiVariable(VarNamespace, "namespace", "backfill_tfjob_info").
			Label("TFJob namespace (training panels)").Description(trainingOnlyScope)).
		WithVariable(multiVariable(VarTFJob, "tfjob", `backfill_tfjob_info{namespace=~"$namespace"}`).
			Label("TFJob (training panels)").Description(trainingOnlyScope)).
		WithVariable(nodeVariable())

	for i, f := range CockpitFigures() {
		b.WithPanel(statPanel(cockpitFirstStatID+uint32(i), f.Title, f.Description, f.Unit, grid(statWidth*uint32(i), 0, statWidth, 4), f.Query))
	}
	uses := []libraryUse{
		{panelID: cockpitCPUID, panel: CPUWatermarkPanel()},
		{panelID: cockpitGPUID, panel: GPUPerPodPanel()},
	}
	b.WithPanel(uses[0].panel.build(cockpitCPUID, grid(0, 4, 12, 9)))
	b.WithPanel(uses[1].panel.build(cockpitGPUID, grid(12, 4, 8, 9)))
	// Not one of CockpitFigures: those are the whole cluster's numbers,
	// which backfill top and backfill doctor read and which have data
	// without any TFJob; this one has none until a TFJob exists.
	b.WithPanel(goodputStat(cockpitGoodputID, "Training goodput",
		"Of the whole life of the selected TFJobs together, the share that trained productively and kept its progress (backfill_tfjob_goodput_seconds): "+
			"productive seconds over all seconds, waiting for capacity, recovery from disruptions and progress a disruption undid included. "+
			"Long jobs weigh more; finished jobs count until they are deleted. The TFJob dashboard shows one job's time by cause.",
		grid(20, 4, 4, 9), TrainingGoodput()))
	b.WithPanel(reclaimedCPUPanel(cockpitReclaimCPUID, grid(0, 13, 12, 9)))
	b.WithPanel(reclaimedMemoryPanel(cockpitReclaimMemoryID, grid(12, 13, 12, 9)))
	b.WithPanel(evictionsPanel(cockpitEvictionsID, grid(0, 22, 24, 6)))
	// The node agent's: one CPU panel per node chosen, repeated across
	// the row, then the interference, throttling and evictions under it.
	b.WithPanel(nodeAgentCPUPanel(cockpitAgentCPUID, grid(0, 28, 24, 8)))
	b.WithPanel(onlineCPUWaitPanel(cockpitOnlineWaitID, grid(0, 36, 12, 8)))
	b.WithPanel(offlineThrottledPanel(cockpitThrottledID, grid(12, 36, 6, 8)))
	b.WithPanel(nodeAgentEvictionsPanel(cockpitAgentEvictID, grid(18, 36, 6, 8)))
	b.WithPanel(tablePanel(cockpitTableID, "Node watermarks",
		"Per node: pods, CPU and memory requested and really used by online and offline pods, the reclaimed capacity the node publishes and what offline pods hold of it, "+
			"pods by QoS class, GPUs allocated and free, and whether its reclaimed capacity is frozen on stale usage (1). "+
			"Nodes whose online use nears allocatable while offline work runs are where training will be preempted first.",
		grid(0, 44, 24, 10), "node", WatermarkColumns()))
	// Whether online pods suffer beside offline ones, and what the
	// manager does about it: a row of its own, last, so that no panel
	// above falls into it.
	b.WithRow(onlineRow(cockpitOnlineRowID, 54))
	b.WithPanel(onlineLatencyPanel(cockpitOnlineP99ID, grid(0, 55, 12, 9)))
	b.WithPanel(onlinePeersPanel(cockpitOnlinePeersID, grid(12, 55, 12, 9)))
	b.WithPanel(onlinePressurePanel(cockpitOnlinePressureID, grid(0, 64, 12, 8)))
	b.WithPanel(onlineHeldPanel(cockpitOnlineHeldID, grid(12, 64, 6, 8)))
	b.WithPanel(onlineActionsPanel(cockpitOnlineActionsID, grid(18, 64, 6, 8)))
	// GPUs online pods hold idle: the evidence for lending them at night.
	b.WithRow(gpuIdleRow(cockpitGPUIdleRowID, 72))
	b.WithPanel(gpuIdleTablePanel(cockpitGPUIdleTableID, grid(0, 73, 14, 9)))
	b.WithPanel(gpuIdleTrendPanel(cockpitGPUIdleTrendID, grid(14, 73, 10, 9)))
	// The GPUs lent to training, and whether they came back in time.
	b.WithRow(gpuLoanRow(cockpitGPULoanRowID, 82))
	b.WithPanel(gpuLoanLentStat(cockpitGPULoanLentID, grid(0, 83, 4, 8)))
	b.WithPanel(gpuLoanNextReturnStat(cockpitGPULoanReturnID, grid(4, 83, 4, 8)))
	b.WithPanel(gpuLoanLentTrend(cockpitGPULoanTrendID, grid(8, 83, 16, 8)))
	b.WithPanel(gpuLoanReturnsTable(cockpitGPULoanTableID, grid(0, 91, 12, 8)))
	b.WithPanel(gpuLoanOnlineWaitTrend(cockpitGPULoanWaitID, grid(12, 91, 12, 8)))

	d, err := b.Build()
	if err != nil {
		return Built{}, fmt.Errorf("building the cockpit: %w", err)
	}
	return Built{Name: "backfill-cockpit", Dashboard: d, library: uses}, nil
}
