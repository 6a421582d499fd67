package main

import (
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/backfill-dev/backfill/test/bench/calibration"
)

// record is the run as calibration.Run, for make bench-reclaim.
func (b *bench) record(a *analysis) *calibration.Run {
	r := &calibration.Run{
		Machine:  machine(b),
		Date:     time.Now().UTC().Truncate(time.Second),
		Command:  "bench-interference " + strings.Join(os.Args[1:], " "),
		Rounds:   a.rounds,
		Rejected: b.rejected,
		Agent:    agentString(b.cfg.agent),
	}
	for _, lr := range a.levels {
		l := calibration.Level{Target: lr.lvl.target, Online: lr.online.Median, Idle: lr.idle.Median,
			Rate: lr.lvl.rate, BurstRate: lr.lvl.burstRate, Requests: lr.requests}
		for _, c := range lr.conds {
			if c.cond.key == keyAlone || c.cond.key == keyBurstAlone {
				continue
			}
			p99 := c.p99
			if c.cond.burst {
				p99 = c.afterBurst
			}
			l.Conds = append(l.Conds, calibration.Condition{
				Key: c.cond.key, Name: c.cond.name, Protection: c.cond.protection, Burst: c.cond.burst,
				P99: p99, P999: c.p999, ServerP99: c.serverP99,
				Online: c.online, Fill: c.fill, Speed: c.speed, Engaged: c.engaged,
			})
		}
		r.Levels = append(r.Levels, l)
	}
	return r
}

// machine describes where the run was measured, from /proc.
func machine(b *bench) calibration.Machine {
	m := calibration.Machine{CPUs: b.cpus, Cgroup: "v1", Kernel: strings.TrimSpace(readOr(b.cfg.procRoot + "/sys/kernel/osrelease"))}
	if b.hier.v2 {
		m.Cgroup = "v2"
	}
	for _, line := range strings.Split(readOr(b.cfg.procRoot+"/cpuinfo"), "\n") {
		k, v, ok := strings.Cut(line, ":")
		switch k = strings.TrimSpace(k); {
		case !ok:
		case k == "model name" && m.Model == "":
			m.Model = strings.TrimSpace(v)
		case k == "flags" && strings.Contains(v, " hypervisor"):
			m.Hypervisor = "yes"
		}
	}
	m.Model += " (" + runtime.GOARCH + ")"
	return m
}

func readOr(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}
