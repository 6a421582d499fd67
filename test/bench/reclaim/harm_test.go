package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backfill-dev/backfill/test/bench/calibration"
)

// fixture is the hand-written record the unit tests run on: made-up
// figures, shaped like a run of make bench-interference.
const fixture = "testdata/fixture-interference.json"

func fixtureHarm(t *testing.T) *harmModel {
	t.Helper()
	h, err := loadHarm(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// records are the interference records kept under testdata: the fixture
// and, once recorded, the run the frontier reads by default.
func records(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*interference.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no interference record under testdata (%v)", err)
	}
	return files
}

// TestTheModelReplaysItsRecord: for every condition of every record kept
// here that the model is calibrated on, the model's inflation at the
// condition's online share and fill is within its 95% interval.
func TestTheModelReplaysItsRecord(t *testing.T) {
	for _, file := range records(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			h, err := loadHarm(file)
			if err != nil {
				t.Fatal(err)
			}
			// Every level has steady conditions; bursts, where the node
			// held one.
			levels, bursts := len(h.run.Levels), 0
			for i := range h.run.Levels {
				if h.run.Levels[i].Find(calibration.KeyBurstBestEffort) != nil {
					bursts++
				}
			}
			if n := len(h.curves[byWeights]); n != levels+bursts {
				t.Errorf("weights curve on %d conditions, want the steady BestEffort of %d levels and the burst of %d", n, levels, bursts)
			}
			if n := len(h.curves[byAgent]); n != levels+bursts {
				t.Errorf("agent curve on %d conditions, want the steady agent of %d levels and the burst of %d", n, levels, bursts)
			}
			for _, d := range h.drift() {
				t.Error(d)
			}
		})
	}
}

// TestTheReplayFailsWhenTheModelDrifts: a model that does not follow its
// record is caught, whichever way it is off.
func TestTheReplayFailsWhenTheModelDrifts(t *testing.T) {
	cases := map[string]struct {
		perturb func(h *harmModel)
		want    string
	}{
		"every slope doubled": {
			perturb: func(h *harmModel) {
				for p := range h.curves {
					for i := range h.curves[p] {
						h.curves[p][i].slope *= 2
					}
				}
			},
			want: "the node agent, level 35%, agent:",
		},
		"the agent read on the weights curve": {
			perturb: func(h *harmModel) { h.curves[byAgent] = h.curves[byWeights] },
			want:    "the node agent, level 65%, agent:",
		},
		"a level's points moved to the other level's online share": {
			perturb: func(h *harmModel) {
				for i := range h.curves[byWeights] {
					h.curves[byWeights][i].online += 0.3
				}
			},
			want: "CPU weights alone, level 65%, burst-besteffort",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := fixtureHarm(t)
			tc.perturb(h)
			d := strings.Join(h.drift(), "\n")
			if !strings.Contains(d, tc.want) {
				t.Errorf("drift:\n%s\nwant a line on %q", d, tc.want)
			}
		})
	}
}

// TestAFillAboveTheIdleCPUIsReplayed: a condition whose training took
// more than the idle CPU (fill 1.4) is reproduced though the model reads
// fill at most 1.
func TestAFillAboveTheIdleCPUIsReplayed(t *testing.T) {
	run := fixtureRun(t)
	c := run.Levels[0].Find(calibration.KeyBestEffort)
	c.Fill.Median, c.P99 = 1.4, calibration.Interval{Median: 1.5, Lo: 1.49, Hi: 1.51}
	h, err := newHarm("fill above 1", run)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range h.drift() {
		t.Error(d)
	}
}

func fixtureRun(t *testing.T) *calibration.Run {
	t.Helper()
	run, err := calibration.Load(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestABadRecordSaysWhatIsWrong: a missing file, a file that is not a
// record, and a record without a condition or figure the model needs
// each get an error naming the file and what is missing.
func TestABadRecordSaysWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	noBurstAgent := fixtureRun(t)
	l := &noBurstAgent.Levels[1]
	l.Conds = l.Conds[:len(l.Conds)-1]
	noFill := fixtureRun(t)
	noFill.Levels[0].Find(calibration.KeyAgent).Fill = calibration.Interval{}
	cases := map[string]struct {
		path string
		want []string
	}{
		"missing":            {path: filepath.Join(dir, "none.json"), want: []string{"none.json", "no such file", "make bench-interference"}},
		"not JSON":           {path: write("text.json", []byte("P99 1.4x")), want: []string{"text.json", "not an interference calibration"}},
		"no burst-agent":     {path: writeRun(t, dir, "partial.json", noBurstAgent), want: []string{"partial.json", `level 65%: no condition "burst-agent"`}},
		"an agent sans fill": {path: writeRun(t, dir, "nofill.json", noFill), want: []string{"nofill.json", `level 35%: condition "agent": no median fill`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := loadHarm(tc.path)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func writeRun(t *testing.T, dir, name string, r *calibration.Run) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := r.Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestInflation(t *testing.T) {
	h := fixtureHarm(t)
	// The fixture's weights points: online 0.35 (1.45x at fill 0.97),
	// 0.64 (6.5x at 0.95), 0.70 (8x at 0.9), 0.93 (18x at 0.8).
	s35, s64 := 0.45/0.97, 5.5/0.95
	cases := map[string]struct {
		p                     protection
		online, fill, starved float64
		want                  float64
	}{
		"no offline work: none":                        {p: byWeights, online: 0.3, fill: 0, starved: 1, want: 1},
		"below the first point: as the first":          {p: byWeights, online: 0.1, fill: 1, starved: 1, want: 1 + s35},
		"half way between two: the geometric slope":    {p: byWeights, online: 0.495, fill: 1, starved: 1, want: 1 + math.Sqrt(s35*s64)},
		"beyond the last point: as the last":           {p: byWeights, online: 0.99, fill: 0.8, starved: 1, want: 18},
		"fill above 1 counts as 1":                     {p: byWeights, online: 0.35, fill: 1.7, starved: 1, want: 1 + s35},
		"the agent's own curve":                        {p: byAgent, online: 0.35, fill: 0.75, starved: 1, want: 1.4},
		"cores: their own curve":                       {p: byCores, online: 0.35, fill: 0.79, starved: 1, want: 1.15},
		"starved online pods wait at least demand/got": {p: byAgent, online: 0.3, fill: 0.1, starved: 3, want: 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := h.inflation(tc.p, tc.online, tc.fill, tc.starved); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("inflation %.4f, want %.4f", got, tc.want)
			}
		})
	}
}

// TestARecordWithoutCoresReadsCoresAsACeiling: Koordinator's cpuset is
// read on the agent's curve when the record measured no cores.
func TestARecordWithoutCoresReadsCoresAsACeiling(t *testing.T) {
	run := fixtureRun(t)
	for i := range run.Levels {
		l := &run.Levels[i]
		var kept []calibration.Condition
		for _, c := range l.Conds {
			if c.Protection != calibration.ProtectionCores {
				kept = append(kept, c)
			}
		}
		l.Conds = kept
	}
	h, err := newHarm("no cores", run)
	if err != nil {
		t.Fatal(err)
	}
	if h.has(byCores) {
		t.Fatal("a record without cores calibrates cores")
	}
	if got, want := h.inflation(byCores, 0.5, 0.6, 1), h.inflation(byAgent, 0.5, 0.6, 1); got != want {
		t.Errorf("cores %.3fx, want the agent's %.3fx", got, want)
	}
}

// TestAMinuteUnderTheAgentUsesTheAgentCurve: with the agent a node's
// minute reads the agent's curve, its ceiling binding or not (the fill
// says how much it held); without it, the weights curve.
func TestAMinuteUnderTheAgentUsesTheAgentCurve(t *testing.T) {
	h := fixtureHarm(t)
	spec := defaultNodeSpec() // 32 CPU, system 0.4
	tr := flat(12, 30, 1)
	withAgent := newBackfill(spec, tr, nil, benchSettings(), &agentSettings{cpuThreshold: 85, cpuActivation: 0, cpuFloor: 10})
	alone := newBackfill(spec, tr, nil, benchSettings(), nil)
	m := minute{online: resources{cpu: 12}, offline: resources{cpu: 19}}
	free := shareCPU(spec, m, math.Inf(1), true)
	capped := shareCPU(spec, m, 10, true)
	if free.capped || !capped.capped {
		t.Fatalf("capped %v without a ceiling and %v under one below demand", free.capped, capped.capped)
	}
	for _, x := range []minute{free, capped} {
		if p := withAgent.protection(nil, x.capped); p != byAgent {
			t.Errorf("capped %v with the agent: %s, want the agent's", x.capped, p)
		}
		if p := alone.protection(nil, x.capped); p != byWeights {
			t.Errorf("capped %v without the agent: %s, want weights", x.capped, p)
		}
	}
	capped.protection = byAgent
	// 12 of 32 CPU online: 0.375; fill 10 / (32 - 12 - 0.4).
	if got, want := capped.latency(spec, h), h.inflation(byAgent, 0.375, 10/19.6, 1); math.Abs(got-want) > 1e-9 {
		t.Errorf("latency %.3f, want %.3f", got, want)
	}
	free.protection = byWeights
	if free.latency(spec, h) <= capped.latency(spec, h) {
		t.Errorf("offline uncapped at full fill (%.2fx) hurt online less than capped (%.2fx) at 37.5%% online", free.latency(spec, h), capped.latency(spec, h))
	}
}

// TestKoordinatorsCpusetReadsTheCoresCurve: with a cores curve in the
// record, Koordinator's offline pods are on cores of their own whether
// or not suppress binds.
func TestKoordinatorsCpusetReadsTheCoresCurve(t *testing.T) {
	tr := flat(8, 30, 1)
	k := newKoordinator(defaultNodeSpec(), tr, perfect(tr), koordDefaults)
	if k.protection(nil, true) != byAgent || k.protection(nil, false) != byWeights {
		t.Error("without cores in the record: not a ceiling when it binds, weights when not")
	}
	k.cpuset = true
	if k.protection(nil, true) != byCores || k.protection(nil, false) != byCores {
		t.Error("with cores in the record: not on cores whether or not suppress binds")
	}
}

func TestHistogram(t *testing.T) {
	var h histogram
	for range 98 {
		h.add(1.0, 1)
	}
	h.add(2.5, 1)
	h.add(100, 1) // beyond the top bin
	h.add(7, 0)   // no weight: not counted
	if got := h.quantile(0.5); got != 1 {
		t.Errorf("median %.2f, want 1", got)
	}
	if got := h.quantile(0.99); math.Abs(got-2.5) > 1e-9 {
		t.Errorf("p99 %.2f, want 2.50", got)
	}
	if got := h.quantile(1); got < 40 {
		t.Errorf("max %.2f, want the top bin", got)
	}
	if got, want := h.mean(), (98+2.5+100)/100.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("mean %.4f, want %.4f (exact)", got, want)
	}
}
