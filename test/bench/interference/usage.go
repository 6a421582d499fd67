package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/stat's CPU times on Linux.
const userHZ = 100

// nodeTimes are the node's CPU times since boot from /proc/stat's cpu
// line: busy is user, nice and system; irq is hard and soft interrupts
// (loopback networking is softirq work, charged to no cgroup); steal is
// time the hypervisor gave to other guests; idle counts waiting for I/O.
type nodeTimes struct{ busy, irq, steal, idle time.Duration }

func readNodeTimes(procRoot string) (nodeTimes, error) {
	f, err := os.Open(filepath.Join(procRoot, "stat"))
	if err != nil {
		return nodeTimes{}, fmt.Errorf("reading the node's CPU use: %w", err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 9 || fields[0] != "cpu" {
			continue
		}
		var v [8]int64 // user nice system idle iowait irq softirq steal
		for i := range v {
			if v[i], err = strconv.ParseInt(fields[i+1], 10, 64); err != nil {
				return nodeTimes{}, fmt.Errorf("parsing %s/stat: %w", procRoot, err)
			}
		}
		tick := func(n int64) time.Duration { return time.Duration(n) * time.Second / userHZ }
		return nodeTimes{busy: tick(v[0] + v[1] + v[2]), irq: tick(v[5] + v[6]), steal: tick(v[7]), idle: tick(v[3] + v[4])}, nil
	}
	return nodeTimes{}, fmt.Errorf("%s/stat has no cpu line", procRoot)
}

// snapshot is where the CPU went, cumulative, at one moment.
type snapshot struct {
	at      time.Time
	node    nodeTimes
	online  time.Duration // the pods' cgroups
	offline time.Duration
	pods    time.Duration // all of kubepods
	system  time.Duration // the bench's system group: the load generator
	bench   time.Duration // this process: the node agent, the sampling
	// pressure is the online pod's CPU pressure "some" (hasPressure).
	pressure    time.Duration
	hasPressure bool
	threads     map[int]threadStat // the online container's threads
	flop        int64              // the training workload's report
	flopAt      time.Time
}

// take reads every counter of a snapshot; train may be nil.
func (b *bench) take(train *workload) (snapshot, error) {
	s := snapshot{at: time.Now()}
	l := b.layout
	var err error
	for _, c := range []struct {
		dst   *time.Duration
		group string
	}{
		{&s.online, l.online.group()}, {&s.offline, l.offline.group()}, {&s.pods, "kubepods"}, {&s.system, "system"},
	} {
		if *c.dst, err = l.usage(c.group); err != nil {
			return s, err
		}
	}
	if s.node, err = readNodeTimes(b.cfg.procRoot); err != nil {
		return s, err
	}
	if s.bench, err = selfCPU(b.cfg.procRoot); err != nil {
		return s, err
	}
	if s.pressure, s.hasPressure, err = l.pressure(l.online.group()); err != nil {
		return s, err
	}
	if s.threads, err = b.onlineThreads(); err != nil {
		return s, err
	}
	if train != nil {
		s.flop, s.flopAt = train.work()
	}
	return s, nil
}

// selfCPU is the CPU time this process used, from its stat (utime and
// stime, fields 14 and 15, after the command in parentheses).
func selfCPU(procRoot string) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, "self", "stat"))
	if err != nil {
		return 0, fmt.Errorf("reading the bench's own CPU use: %w", err)
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, fmt.Errorf("parsing %s/self/stat: too few fields", procRoot)
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing %s/self/stat: %w", procRoot, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// loadAverage is the node's 1, 5 and 15 minute load averages.
func loadAverage(procRoot string) string {
	b, err := os.ReadFile(filepath.Join(procRoot, "loadavg"))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
