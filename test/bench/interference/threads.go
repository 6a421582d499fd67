package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// threadStat is what the kernel tells of one thread: its time on a CPU
// and waiting runnable for one (schedstat), how often it moved between
// CPUs and was preempted (sched, where the kernel has it).
type threadStat struct {
	run, wait             time.Duration
	migrations, preempted int64
}

// onlineThreads reads the online container's threads; a thread that ends
// while it is read is left out.
func (b *bench) onlineThreads() (map[int]threadStat, error) {
	tids, err := b.layout.tasks(b.layout.online.container())
	if err != nil {
		return nil, err
	}
	out := make(map[int]threadStat, len(tids))
	for _, tid := range tids {
		if st, err := readThread(b.cfg.procRoot, tid); err == nil {
			out[tid] = st
		}
	}
	return out, nil
}

func readThread(procRoot string, tid int) (threadStat, error) {
	dir := filepath.Join(procRoot, strconv.Itoa(tid))
	b, err := os.ReadFile(filepath.Join(dir, "schedstat"))
	if err != nil {
		return threadStat{}, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return threadStat{}, fmt.Errorf("%s/schedstat: %q", dir, b)
	}
	var st threadStat
	run, err1 := strconv.ParseInt(f[0], 10, 64)
	wait, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return threadStat{}, fmt.Errorf("%s/schedstat: %q", dir, b)
	}
	st.run, st.wait = time.Duration(run), time.Duration(wait)
	// /proc/<tid>/sched needs the kernel's scheduler debug support;
	// without it the counts stay 0 and the report says so.
	if b, err := os.ReadFile(filepath.Join(dir, "sched")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				continue
			}
			switch strings.TrimSpace(k) {
			case "se.nr_migrations":
				st.migrations = n
			case "nr_involuntary_switches":
				st.preempted = n
			}
		}
	}
	return st, nil
}

// threadDelta is what the threads did between two snapshots, summed over
// the threads seen at both (a new thread counts from its first sight).
type threadDelta struct {
	run, wait             time.Duration
	migrations, preempted int64
}

func threadsSince(prev, cur map[int]threadStat) threadDelta {
	var d threadDelta
	for tid, c := range cur {
		p, ok := prev[tid]
		if !ok {
			continue
		}
		d.run += max(c.run-p.run, 0)
		d.wait += max(c.wait-p.wait, 0)
		d.migrations += max(c.migrations-p.migrations, 0)
		d.preempted += max(c.preempted-p.preempted, 0)
	}
	return d
}
