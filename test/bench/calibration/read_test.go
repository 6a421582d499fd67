package calibration

import (
	"strings"
	"testing"
)

func TestRequireNamesWhatALevelLacks(t *testing.T) {
	r := &Run{Levels: []Level{{Target: 0.35, Conds: []Condition{
		{Key: KeyBestEffort, Protection: ProtectionWeights, P99: Interval{Median: 1.4}, Online: Interval{Median: 0.35}, Fill: Interval{Median: 0.9}},
		{Key: KeyAgent, Protection: ProtectionAgent, P99: Interval{Median: 1.3}},
		{Key: KeyAloneAgain, Protection: ProtectionNone, P99: Interval{Median: 1}, Online: Interval{Median: 0.35}},
	}}}}
	if err := r.Require(KeyBestEffort, KeyAloneAgain); err != nil {
		t.Errorf("a level with both: %v", err)
	}
	err := r.Require(KeyBestEffort, KeyAgent, KeyBurstAgent)
	for _, want := range []string{`level 35%: condition "agent": no median online, fill`, `level 35%: no condition "burst-agent"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
}

func TestRequireBurstsWhereALevelHasThem(t *testing.T) {
	measured := func(key string, burst bool) Condition {
		return Condition{Key: key, Burst: burst, P99: Interval{Median: 2}, Online: Interval{Median: 0.4}, Fill: Interval{Median: 0.8}}
	}
	light := Level{Target: 0.35, Conds: []Condition{measured(KeyBestEffort, false), measured(KeyBurstBestEffort, true)}}
	heavy := Level{Target: 0.65, Conds: []Condition{measured(KeyBestEffort, false)}}
	if err := (&Run{Levels: []Level{light, heavy}}).RequireBursts(KeyBurstBestEffort); err != nil {
		t.Errorf("a heavy level without bursts: %v", err)
	}
	if err := (&Run{Levels: []Level{light, heavy}}).RequireBursts(KeyBurstAgent); err == nil || !strings.Contains(err.Error(), `level 35%: no condition "burst-agent"`) {
		t.Errorf("a light level with bursts but not the agent's: %v", err)
	}
	if err := (&Run{Levels: []Level{heavy}}).RequireBursts(KeyBurstBestEffort); err == nil || !strings.Contains(err.Error(), "no level measured bursts") {
		t.Errorf("no level with bursts: %v", err)
	}
}

func TestWithProtection(t *testing.T) {
	l := Level{Conds: []Condition{
		{Key: "cores", Protection: ProtectionCores},
		{Key: "burst-cores", Protection: ProtectionCores, Burst: true},
		{Key: KeyAgent, Protection: ProtectionAgent},
	}}
	steady, burst := l.WithProtection(ProtectionCores, false), l.WithProtection(ProtectionCores, true)
	if len(steady) != 1 || steady[0].Key != "cores" || len(burst) != 1 || burst[0].Key != "burst-cores" {
		t.Errorf("steady %v, burst %v: want cores and burst-cores", steady, burst)
	}
}

func TestMachineString(t *testing.T) {
	m := Machine{CPUs: 2, Model: "Xeon (amd64)", Kernel: "6.1.0", Cgroup: "v2"}
	if got, want := m.String(), "2 CPUs, Xeon (amd64), Linux 6.1.0, cgroup v2"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
