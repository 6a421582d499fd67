package rules

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/prometheus/promql/parser"
)

// Series of a TFJob team-a/mnist whose worker 0 runs on gpu-node-0, as the
// manager exports them; 200 samples at 15s cover 50 minutes.
const (
	mnistWorker     = `backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="gpu-node-0",tfjob="mnist",replica_type="worker"} 1x200`
	mnistRunning    = `backfill_tfjob_info{namespace="team-a",tfjob="mnist",phase="Running",priority_class="backfill-offline"} 1x200`
	mnistSucceeded  = `backfill_tfjob_info{namespace="team-a",tfjob="mnist",phase="Succeeded",priority_class="backfill-offline"} 1x200`
	mnistFailed     = `backfill_tfjob_info{namespace="team-a",tfjob="mnist",phase="Failed",priority_class="backfill-offline"} 1x200`
	mnistCreated    = `backfill_tfjob_info{namespace="team-a",tfjob="mnist",phase="Created",priority_class="backfill-offline"} 1x200`
	mnistCreatedAt0 = `backfill_tfjob_created_timestamp_seconds{namespace="team-a",tfjob="mnist"} 0x200`
	// A free GPU under honorLabels: false: its pod label is the exporter's.
	freeGPU = `DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b",namespace="monitoring",pod="dcgm-exporter-x",container="exporter"} 0x200`
)

// gpuUtil is worker 0's GPU at util, labelled as dcgm-exporter's scrape
// with honorLabels false (exported_pod) or true (pod).
func gpuUtil(util string, exported bool) string {
	if exported {
		return `DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",exported_namespace="team-a",exported_pod="mnist-worker-0",exported_container="tensorflow",namespace="monitoring",pod="dcgm-exporter-x",container="exporter"} ` + util
	}
	return `DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",namespace="team-a",pod="mnist-worker-0",container="tensorflow"} ` + util
}

// annotations are an alert's annotations with its runbook.
func annotations(name, summary, description string) map[string]string {
	return map[string]string{"summary": summary, "description": description, "runbook_url": RunbookBase + name}
}

func TestAlerts(t *testing.T) {
	idleGPU := firing{
		Labels: map[string]string{
			"alertname": "BackfillTFJobGPUIdle", "severity": "warning",
			"namespace": "team-a", "pod": "mnist-worker-0", "gpu": "0", "UUID": "GPU-a",
			"node": "gpu-node-0", "tfjob": "mnist", "replica_type": "worker",
		},
		Annotations: annotations("backfilltfjobgpuidle", "A GPU of TFJob team-a/mnist is idle",
			"GPU 0 (GPU-a) of pod team-a/mnist-worker-0 on node gpu-node-0 has been less than 10% busy for 30 minutes while its TFJob runs (now 5%). The job holds a GPU other jobs could use."),
	}
	onlineNode0 := `backfill_node_limits{node="node-0",tier="online",resource="%s"} %s`
	offlineOnNode0 := `backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="node-0",tfjob="mnist",replica_type="worker"} 1x200`
	// 14.25 CPU-seconds every 15s is 0.95 cores; 30 is 2 cores.
	onlineCPU := `container_cpu_usage_seconds_total{namespace="shop",pod="web-0",container="web",node="node-0"} 0+14.25x200`
	slowOnlineCPU := `container_cpu_usage_seconds_total{namespace="shop",pod="web-0",container="web",node="node-0"} 0+7.5x200`
	offlineCPU := `container_cpu_usage_seconds_total{namespace="team-a",pod="mnist-worker-0",container="tensorflow",node="node-0"} 0+30x200`
	podLevelCPU := `container_cpu_usage_seconds_total{namespace="shop",pod="web-0",container="",node="node-0"} 0+14.25x200`
	onlineMemory := `container_memory_working_set_bytes{namespace="shop",pod="web-0",container="web",node="node-0"} 950000000x200`
	offlineMemory := `container_memory_working_set_bytes{namespace="team-a",pod="mnist-worker-0",container="tensorflow",node="node-0"} 4000000000x200`

	cases := map[string]struct {
		series []string
		at     time.Duration
		alert  string
		want   []firing
	}{
		"GPU idle, exporter labels exported_pod": {
			series: []string{gpuUtil("5x200", true), freeGPU, mnistWorker, mnistRunning},
			at:     40 * time.Minute, alert: "BackfillTFJobGPUIdle", want: []firing{idleGPU},
		},
		"GPU idle, exporter labels pod": {
			series: []string{gpuUtil("5x200", false), mnistWorker, mnistRunning},
			at:     40 * time.Minute, alert: "BackfillTFJobGPUIdle", want: []firing{idleGPU},
		},
		"GPU idle, manager scraped by a ServiceMonitor": {
			series: []string{gpuUtil("5x200", true), freeGPU, scrapedByServiceMonitor(mnistWorker), scrapedByServiceMonitor(mnistRunning)},
			at:     40 * time.Minute, alert: "BackfillTFJobGPUIdle", want: []firing{idleGPU},
		},
		"GPU busy: silent": {
			series: []string{gpuUtil("80x200", true), freeGPU, mnistWorker, mnistRunning},
			at:     40 * time.Minute, alert: "BackfillTFJobGPUIdle",
		},
		"GPU idle for less than 30 minutes: silent": {
			series: []string{gpuUtil("80x80 5x120", true), mnistWorker, mnistRunning},
			at:     40 * time.Minute, alert: "BackfillTFJobGPUIdle",
		},
		"GPU idle after the job succeeded: silent": {
			series: []string{gpuUtil("5x200", true), mnistWorker, mnistSucceeded},
			at:     40 * time.Minute, alert: "BackfillTFJobGPUIdle",
		},
		"restarts: 3 in 15 minutes": {
			series: []string{`backfill_tfjob_restarts{namespace="team-a",tfjob="mnist"} 0x20 1x20 2x20 3x140`},
			at:     20 * time.Minute, alert: "BackfillTFJobRestartingOften",
			want: []firing{{
				Labels: map[string]string{"alertname": "BackfillTFJobRestartingOften", "severity": "warning", "namespace": "team-a", "tfjob": "mnist"},
				Annotations: annotations("backfilltfjobrestartingoften", "TFJob team-a/mnist restarts often",
					"TFJob team-a/mnist had 3 restarts charged to its backoffLimit in the last hour (failed pods recreated, containers restarted in place); it fails once backoffLimit is reached."),
			}},
		},
		"restarts: 2 in 50 minutes: silent": {
			series: []string{`backfill_tfjob_restarts{namespace="team-a",tfjob="mnist"} 5x100 7x100`},
			at:     49 * time.Minute, alert: "BackfillTFJobRestartingOften",
		},
		"job failed": {
			series: []string{mnistFailed},
			at:     time.Minute, alert: "BackfillTFJobFailed",
			want: []firing{{
				Labels: map[string]string{
					"alertname": "BackfillTFJobFailed", "severity": "warning",
					"namespace": "team-a", "tfjob": "mnist", "phase": "Failed", "priority_class": "backfill-offline",
				},
				Annotations: annotations("backfilltfjobfailed", "TFJob team-a/mnist failed",
					"TFJob team-a/mnist failed; its Failed condition says why (a replica that failed for good, backoffLimit, activeDeadlineSeconds)."),
			}},
		},
		"job succeeded: silent": {
			series: []string{mnistSucceeded},
			at:     time.Minute, alert: "BackfillTFJobFailed",
		},
		"job created 40 minutes ago, never ran": {
			series: []string{mnistCreatedAt0, mnistCreated},
			at:     40 * time.Minute, alert: "BackfillTFJobPendingTooLong",
			want: []firing{{
				Labels: map[string]string{"alertname": "BackfillTFJobPendingTooLong", "severity": "warning", "namespace": "team-a", "tfjob": "mnist"},
				Annotations: annotations("backfilltfjobpendingtoolong", "TFJob team-a/mnist has not run for 30 minutes",
					"TFJob team-a/mnist was created 40m 0s ago and none of its runs started: its pods wait for room (offline work only gets idle capacity), for a gang, or cannot be created."),
			}},
		},
		"job created 20 minutes ago: silent": {
			series: []string{mnistCreatedAt0, mnistCreated},
			at:     20 * time.Minute, alert: "BackfillTFJobPendingTooLong",
		},
		"job created 40 minutes ago, running: silent": {
			series: []string{mnistCreatedAt0, mnistRunning},
			at:     40 * time.Minute, alert: "BackfillTFJobPendingTooLong",
		},
		"4 disruptions a minute": {
			series: []string{
				`backfill_disruptions_total{reason="PreemptionByScheduler"} 0+1x200`,
				`backfill_disruptions_total{reason="EvictionByEvictionAPI"} 0x200`,
			},
			at: 20 * time.Minute, alert: "BackfillOfflineDisruptionStorm",
			want: []firing{{
				Labels: map[string]string{"alertname": "BackfillOfflineDisruptionStorm", "severity": "warning"},
				Annotations: annotations("backfillofflinedisruptionstorm", "Offline pods are being preempted or evicted in a storm",
					"40 TFJob pods were preempted, evicted or lost with their node in the last 10 minutes. Training restarts from its checkpoints again and again and makes no progress."),
			}},
		},
		"one disruption every 5 minutes: silent": {
			series: []string{`backfill_disruptions_total{reason="PreemptionByScheduler"} 0+0.05x200`},
			at:     40 * time.Minute, alert: "BackfillOfflineDisruptionStorm",
		},
		"online CPU at 95% of its limits beside offline work": {
			series: []string{onlineCPU, podLevelCPU, offlineCPU, offlineOnNode0, sprintf(onlineNode0, "cpu", "1x200")},
			at:     25 * time.Minute, alert: "BackfillOnlineCPUNearLimit",
			want: []firing{{
				Labels: map[string]string{"alertname": "BackfillOnlineCPUNearLimit", "severity": "warning", "node": "node-0"},
				Annotations: annotations("backfillonlinecpunearlimit", "Online pods on node node-0 use 95% of their CPU limits",
					"Online pods on node node-0, which also runs offline work, have used more than 90% of their summed CPU limits for 15 minutes (95%): they are being throttled or soon will be, and offline work competes with them for the node."),
			}},
		},
		"online CPU near its limits, manager scraped by a ServiceMonitor": {
			series: []string{
				onlineCPU, offlineCPU,
				scrapedByServiceMonitor(offlineOnNode0), scrapedByServiceMonitor(sprintf(onlineNode0, "cpu", "1x200")),
			},
			at: 25 * time.Minute, alert: "BackfillOnlineCPUNearLimit",
			want: []firing{{
				Labels: map[string]string{"alertname": "BackfillOnlineCPUNearLimit", "severity": "warning", "node": "node-0"},
				Annotations: annotations("backfillonlinecpunearlimit", "Online pods on node node-0 use 95% of their CPU limits",
					"Online pods on node node-0, which also runs offline work, have used more than 90% of their summed CPU limits for 15 minutes (95%): they are being throttled or soon will be, and offline work competes with them for the node."),
			}},
		},
		"online CPU at 50% of its limits: silent": {
			series: []string{slowOnlineCPU, offlineCPU, offlineOnNode0, sprintf(onlineNode0, "cpu", "1x200")},
			at:     25 * time.Minute, alert: "BackfillOnlineCPUNearLimit",
		},
		"online CPU at 95% of its limits, no offline work: silent": {
			series: []string{onlineCPU, sprintf(onlineNode0, "cpu", "1x200")},
			at:     25 * time.Minute, alert: "BackfillOnlineCPUNearLimit",
		},
		"online pods without CPU limits: silent": {
			series: []string{onlineCPU, offlineCPU, offlineOnNode0, sprintf(onlineNode0, "cpu", "0x200")},
			at:     25 * time.Minute, alert: "BackfillOnlineCPUNearLimit",
		},
		"online memory at 95% of its limits beside offline work": {
			series: []string{onlineMemory, offlineMemory, offlineOnNode0, sprintf(onlineNode0, "memory", "1000000000x200")},
			at:     25 * time.Minute, alert: "BackfillOnlineMemoryNearLimit",
			want: []firing{{
				Labels: map[string]string{"alertname": "BackfillOnlineMemoryNearLimit", "severity": "warning", "node": "node-0"},
				Annotations: annotations("backfillonlinememorynearlimit", "Online pods on node node-0 use 95% of their memory limits",
					"Online pods on node node-0, which also runs offline work, have had a working set above 90% of their summed memory limits for 15 minutes (95%): they risk being OOM-killed."),
			}},
		},
		"online memory at 95% for 10 minutes only: silent": {
			series: []string{onlineMemory, offlineMemory, offlineOnNode0, sprintf(onlineNode0, "memory", "1000000000x200")},
			at:     10 * time.Minute, alert: "BackfillOnlineMemoryNearLimit",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := firingAt(t, tc.series, tc.at)
			if diff := cmp.Diff(tc.want, got[tc.alert]); diff != "" {
				t.Errorf("%s firing at %v (-want +got):\n%s", tc.alert, tc.at, diff)
			}
		})
	}
}

// TestEveryAlertTested keeps TestAlerts honest: each alert has a case that
// fires and one that stays silent.
func TestEveryAlertTested(t *testing.T) {
	// The names TestAlerts checks, firing and silent; kept in step by hand,
	// and checked against Groups here.
	tested := []string{
		"BackfillTFJobGPUIdle", "BackfillTFJobRestartingOften", "BackfillTFJobFailed", "BackfillTFJobPendingTooLong",
		// TestTrainingAlerts
		"BackfillTFJobGoodputLow", "BackfillTFJobGPUMemoryNearFull",
		"BackfillOfflineDisruptionStorm", "BackfillOnlineCPUNearLimit", "BackfillOnlineMemoryNearLimit",
		// TestReclaimAlerts
		"BackfillReclaimEvictionStorm", "BackfillReclaimUsageStale",
		// TestNodeAgentAlerts
		"BackfillOnlinePodsWaitForCPU", "BackfillNodeAgentMissing",
		// TestOnlineAlerts
		"BackfillOnlineObjectiveMissed",
		// TestGPULoanAlerts
		"BackfillGPULoanReturnedLate", "BackfillGPULoanMissedReturn",
	}
	var names []string
	for _, g := range Groups() {
		for _, a := range g.Alerts {
			names = append(names, a.Name)
		}
	}
	if diff := cmp.Diff(tested, names); diff != "" {
		t.Errorf("alerts (-tested +defined):\n%s", diff)
	}
}

func TestAlertsAreWellFormed(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	seen := map[string]bool{}
	for _, g := range Groups() {
		for _, a := range g.Alerts {
			if _, err := p.ParseExpr(a.Expr); err != nil {
				t.Errorf("%s: expression does not parse: %v", a.Name, err)
			}
			if seen[a.Name] {
				t.Errorf("%s: defined twice", a.Name)
			}
			seen[a.Name] = true
			if !alertName.MatchString(a.Name) {
				t.Errorf("%s: name must be CamelCase starting with Backfill", a.Name)
			}
			switch a.Severity {
			case SeverityCritical, SeverityWarning, SeverityInfo:
			default:
				t.Errorf("%s: severity %q is not critical, warning or info", a.Name, a.Severity)
			}
			if a.Summary == "" || a.Description == "" {
				t.Errorf("%s: summary and description are required", a.Name)
			}
		}
	}
}
