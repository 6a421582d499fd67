package rules

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// goodput is TFJob team-a/mnist's account by cause (promqltest's load
// syntax for productive, progress_lost, recovery and waiting), as the
// manager exports it; 400 samples at 15s cover 100 minutes.
func goodput(productive, lost, recovery, waiting string) []string {
	series := `backfill_tfjob_goodput_seconds{namespace="team-a",tfjob="mnist",cause="%s"} %s`
	return []string{
		sprintf(series, "productive", productive), sprintf(series, "progress_lost", lost),
		sprintf(series, "recovery", recovery), sprintf(series, "waiting", waiting),
	}
}

// fbGPU0 is worker 0's GPU 0 with used and free MiB, labelled as
// dcgm-exporter's scrape with honorLabels false (exported_pod) or true.
func fbGPU0(used, free string, exported bool) []string {
	labels := `gpu="0",UUID="GPU-a",namespace="team-a",pod="mnist-worker-0",container="tensorflow"`
	if exported {
		labels = `gpu="0",UUID="GPU-a",exported_namespace="team-a",exported_pod="mnist-worker-0",exported_container="tensorflow",namespace="monitoring",pod="dcgm-exporter-x",container="exporter"`
	}
	return []string{`DCGM_FI_DEV_FB_USED{` + labels + `} ` + used, `DCGM_FI_DEV_FB_FREE{` + labels + `} ` + free}
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestTrainingAlerts(t *testing.T) {
	// Since it first ran, a third of every second is productive, a third
	// undone, a third recovering: 33%, over an hour of running at minute 60.
	thirds := goodput("0+5x400", "0+5x400", "0+5x400", "600x400")
	lowGoodput := firing{
		Labels: map[string]string{"alertname": "BackfillTFJobGoodputLow", "severity": "warning", "namespace": "team-a", "tfjob": "mnist"},
		Annotations: annotations("backfilltfjobgoodputlow", "TFJob team-a/mnist keeps little of its training",
			"Only 33.33% of TFJob team-a/mnist's time since it first ran kept its progress, less than 50% for 30 minutes: "+
				"the rest went to training that disruptions and restarts undid back to the last checkpoint, and to recovering from them."),
	}
	running := `backfill_tfjob_info{namespace="team-a",tfjob="mnist",phase="Running",priority_class="backfill-offline"} 1x400`
	fullGPU := firing{
		Labels: map[string]string{
			"alertname": "BackfillTFJobGPUMemoryNearFull", "severity": "warning",
			"namespace": "team-a", "pod": "mnist-worker-0", "gpu": "0", "UUID": "GPU-a",
			"node": "gpu-node-0", "tfjob": "mnist", "replica_type": "worker",
		},
		Annotations: annotations("backfilltfjobgpumemorynearfull", "GPU memory of TFJob team-a/mnist is nearly full",
			"GPU 0 (GPU-a) of pod team-a/mnist-worker-0 on node gpu-node-0 has had more than 95% of its memory in use for 15 minutes (now 98.75%): "+
				"a larger batch, a longer sequence or a leak runs it out of memory and fails the replica. "+
				"TensorFlow takes nearly all of a GPU's memory at start unless TF_FORCE_GPU_ALLOW_GROWTH=true: see the runbook."),
	}
	// 79 and 72 of 80 GiB, in MiB.
	full, roomy := [2]string{"80896x200", "1024x200"}, [2]string{"73728x200", "8192x200"}

	cases := map[string]struct {
		series []string
		at     time.Duration
		alert  string
		want   []firing
	}{
		"goodput a third, over 95 minutes of running": {
			series: concat(thirds, []string{running}),
			at:     95 * time.Minute, alert: "BackfillTFJobGoodputLow", want: []firing{lowGoodput},
		},
		"goodput a third, manager scraped by a ServiceMonitor": {
			series: []string{
				scrapedByServiceMonitor(thirds[0]), scrapedByServiceMonitor(thirds[1]), scrapedByServiceMonitor(thirds[2]),
				scrapedByServiceMonitor(thirds[3]), scrapedByServiceMonitor(running),
			},
			at: 95 * time.Minute, alert: "BackfillTFJobGoodputLow", want: []firing{lowGoodput},
		},
		// Restarting from minute 60 on: the job is still being run.
		"goodput a third, the job restarting": {
			series: concat(thirds, []string{
				`backfill_tfjob_info{namespace="team-a",tfjob="mnist",phase="Running",priority_class="backfill-offline"} 1x240`,
				`backfill_tfjob_info{namespace="team-a",tfjob="mnist",phase="Restarting",priority_class="backfill-offline"} _x240 1x160`,
			}),
			at: 95 * time.Minute, alert: "BackfillTFJobGoodputLow", want: []firing{lowGoodput},
		},
		// An hour of running at minute 60, low for 30 minutes at minute 90.
		"goodput a third, only 85 minutes of running: silent": {
			series: concat(thirds, []string{running}),
			at:     85 * time.Minute, alert: "BackfillTFJobGoodputLow",
		},
		"goodput 90%: silent": {
			series: concat(goodput("0+13.5x400", "0+1x400", "0+0.5x400", "600x400"), []string{running}),
			at:     95 * time.Minute, alert: "BackfillTFJobGoodputLow",
		},
		// Two hours of waiting, then every second productive: a third of
		// the job's life, all of its time since it first ran.
		"waited two hours, then trained without a hitch: silent": {
			series: concat(goodput("0+15x400", "0x400", "0x400", "7200x400"), []string{running}),
			at:     95 * time.Minute, alert: "BackfillTFJobGoodputLow",
		},
		"goodput a third, the job succeeded: silent": {
			series: concat(thirds, []string{`backfill_tfjob_info{namespace="team-a",tfjob="mnist",phase="Succeeded",priority_class="backfill-offline"} 1x400`}),
			at:     95 * time.Minute, alert: "BackfillTFJobGoodputLow",
		},
		"GPU memory 98.75% full, exporter labels exported_pod": {
			series: concat(fbGPU0(full[0], full[1], true), []string{mnistWorker}),
			at:     20 * time.Minute, alert: "BackfillTFJobGPUMemoryNearFull", want: []firing{fullGPU},
		},
		"GPU memory 98.75% full, exporter labels pod": {
			series: concat(fbGPU0(full[0], full[1], false), []string{mnistWorker}),
			at:     20 * time.Minute, alert: "BackfillTFJobGPUMemoryNearFull", want: []firing{fullGPU},
		},
		"GPU memory 98.75% full, manager scraped by a ServiceMonitor": {
			series: concat(fbGPU0(full[0], full[1], true), []string{scrapedByServiceMonitor(mnistWorker)}),
			at:     20 * time.Minute, alert: "BackfillTFJobGPUMemoryNearFull", want: []firing{fullGPU},
		},
		"GPU memory 90% full: silent": {
			series: concat(fbGPU0(roomy[0], roomy[1], true), []string{mnistWorker}),
			at:     20 * time.Minute, alert: "BackfillTFJobGPUMemoryNearFull",
		},
		// 90% for 10 minutes, then full: full for 10 minutes at minute 20.
		"GPU memory full for 10 minutes only: silent": {
			series: concat(fbGPU0("73728x40 80896x160", "8192x40 1024x160", true), []string{mnistWorker}),
			at:     20 * time.Minute, alert: "BackfillTFJobGPUMemoryNearFull",
		},
		"GPU memory full, offline pod of no TFJob: silent": {
			series: concat(fbGPU0(full[0], full[1], true), []string{
				`backfill_offline_pod_info{namespace="team-a",pod="mnist-worker-0",node="gpu-node-0",tfjob="",replica_type=""} 1x200`,
			}),
			at: 20 * time.Minute, alert: "BackfillTFJobGPUMemoryNearFull",
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
