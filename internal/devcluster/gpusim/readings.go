package gpusim

import (
	"math"
	"strconv"
	"time"
)

// UtilAnnotation on a pod sets the utilisation (a number from 0 to 100) the
// simulator reports for every GPU the pod holds, so that a demo or a test can
// stage an idle or a saturated job. Values outside 0–100 are clamped; a value
// that is not a number is ignored.
const UtilAnnotation = "backfill.dev/sim-gpu-util"

// MemoryAnnotation on a pod sets the share of memory in use, in percent
// from 0 to 100, that the simulator reports for every GPU the pod holds,
// so that a demo or a test can stage a GPU running out of memory
// (BackfillTFJobGPUMemoryNearFull). Values outside 0–100 are clamped; a
// value that is not a number is ignored.
const MemoryAnnotation = "backfill.dev/sim-gpu-memory"

// The simulated card's physics: made up, but in the range of an A100 80 GB,
// so that panels and alert thresholds written for real GPUs show something
// sensible.
const (
	busyUtil      = 85.0        // a training step keeps the GPU mostly busy
	wobbleUtil    = 4.0         // ± around busyUtil, so graphs are not flat lines
	wobblePeriod  = time.Minute // one full swing of the wobble
	idleTempC     = 33.0        // °C with nothing running
	tempPerUtil   = 0.4         // °C per point of utilisation: 73 °C at 100 %
	idlePowerW    = 62.0        // W with nothing running
	powerPerUtil  = 3.3         // W per point of utilisation: 392 W at 100 % (TDP 400 W)
	heldFBShare   = 0.25        // share of the framebuffer a loaded but idle model holds
	activeFBShare = 0.70        // further share held at 100 % utilisation
	fbTotal       = float64(FBTotalMiB)
)

// setReadings fills in g's readings at now: a free GPU idles; a held GPU runs
// at the utilisation its pod's UtilAnnotation asks for, or else busy with a
// small wobble that depends only on now and the GPU's index. A held GPU's
// memory follows its utilisation, a loaded model plus what its steps
// take, unless the pod's MemoryAnnotation sets it.
func (g *GPU) setReadings(h *holder, now time.Time) {
	util := 0.0
	if h != nil {
		var ok bool
		if util, ok = annotatedPercent(h.pod.Annotations, UtilAnnotation); !ok {
			util = busyUtilAt(now, g.Index)
		}
	}
	g.Util = util
	g.GrEngineActive = util / 100
	g.TempC = math.Round(idleTempC + tempPerUtil*util)
	g.PowerW = math.Round((idlePowerW+powerPerUtil*util)*1000) / 1000
	if h != nil {
		share, ok := annotatedPercent(h.pod.Annotations, MemoryAnnotation)
		if !ok {
			share = 100 * (heldFBShare + activeFBShare*util/100)
		}
		g.FBUsedMiB = math.Round(fbTotal * share / 100)
	}
	g.FBFreeMiB = fbTotal - g.FBUsedMiB
}

// annotatedPercent reads a percentage annotation (UtilAnnotation,
// MemoryAnnotation) from a pod's annotations, clamped to 0–100.
func annotatedPercent(annotations map[string]string, key string) (float64, bool) {
	v, ok := annotations[key]
	if !ok {
		return 0, false
	}
	u, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(u) {
		return 0, false
	}
	return math.Max(0, math.Min(100, u)), true
}

// busyUtilAt is the default utilisation of a held GPU: busyUtil plus a sine
// wobble whose phase differs per GPU, rounded to a whole percent as DCGM
// reports it.
func busyUtilAt(now time.Time, index int) float64 {
	phase := 2*math.Pi*float64(now.UnixNano()%int64(wobblePeriod))/float64(wobblePeriod) + float64(index)
	return math.Round(busyUtil + wobbleUtil*math.Sin(phase))
}
