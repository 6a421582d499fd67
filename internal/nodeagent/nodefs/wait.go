package nodefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A group's CPU wait has one definition on every node: the time during which at least one of the group's threads was
// runnable but not running, as the kernel's pressure stall information (PSI) counts "some" in cpu.pressure. It is a
// share of the time, from 0 to 1 second per second whatever the count of threads: a pod whose eight threads all wait
// for the same second waited one second, as one whose single thread did.
//
// Where the kernel counts it for the group it is read (WaitPressure): cgroup v2, and cgroup v1 nodes whose unified
// hierarchy (systemd's hybrid layout, mounted at Root/unified) holds the group, every cgroup there having a
// cpu.pressure of its own. Elsewhere on v1 it is estimated (WaitEstimate) from the run-queue wait of each of the
// group's threads (ProcRoot/<tid>/schedstat, 2nd field): between two reads their waits summed, but at most the time
// elapsed. The estimate is "some" exactly while the threads wait one at a time, and above it while several wait at
// once, by at most the count of threads waiting, never past the elapsed time.

// The sources of a CPU wait, the values WaitSource returns.
const (
	// WaitPressure: the "some" total of the group's cpu.pressure.
	WaitPressure = "pressure"
	// WaitEstimate: the threads' run-queue waits summed, at most the time elapsed.
	WaitEstimate = "run-queue estimate"
)

// WaitMeter measures, monotonically, each group's CPU wait (see above) since the meter first read it.
type WaitMeter struct {
	fs *FS
	// now is the clock the estimate bounds its reads by.
	now func() time.Time

	mu     sync.Mutex
	groups map[string]*groupWait
}

// groupWait is what a meter remembers of one group between reads.
type groupWait struct {
	// total is the group's wait since the meter first read it.
	total time.Duration
	// source is what the last read read; a read from another source is the first of that source, which counts nothing.
	source string
	// pressure is the "some" total at the last read (WaitPressure).
	pressure time.Duration
	// at and threads are the time of the last read and each thread's run-queue wait then (WaitEstimate).
	at      time.Time
	threads map[int]time.Duration
}

// NewWaitMeter starts a meter with no history: the first read of a group counts nothing, and is where its wait starts.
func (f *FS) NewWaitMeter() *WaitMeter {
	return &WaitMeter{fs: f, now: time.Now, groups: map[string]*groupWait{}}
}

// WaitSource says how the node's CPU waits are measured: WaitPressure on cgroup v2; on v1 with a unified hierarchy
// WaitPressure for the groups it holds, else WaitEstimate.
func (f *FS) WaitSource() string {
	switch {
	case f.Version == V2:
		return WaitPressure
	case f.Unified != "":
		return WaitPressure + " (unified hierarchy), else " + WaitEstimate
	}
	return WaitEstimate
}

// pressureFile is group's cpu.pressure, "" when the node has none for it.
func (f *FS) pressureFile(group string) string {
	if f.Version == V2 {
		return filepath.Join(f.path(cpuCtl, group), "cpu.pressure")
	}
	if f.Unified == "" {
		return ""
	}
	file := filepath.Join(f.Unified, f.Parent, f.top(), group, "cpu.pressure")
	if _, err := os.Stat(file); err != nil {
		return ""
	}
	return file
}

// Read is how long, since the meter first read group, at least one of its threads waited for a CPU.
func (m *WaitMeter) Read(group string) (time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	g := m.groups[group]
	if g == nil {
		g = &groupWait{}
	}
	var err error
	if file := m.fs.pressureFile(group); file != "" {
		err = g.readPressure(file)
	} else {
		err = g.estimate(m.fs.path(cpuCtl, group), m.fs.ProcRoot, now)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			delete(m.groups, group) // the pod is gone: do not keep its threads forever
		}
		return 0, err
	}
	m.groups[group] = g
	return g.total, nil
}

// readPressure adds what file's "some" total grew by since the last read.
func (g *groupWait) readPressure(file string) error {
	us, err := readPressureTotal(file)
	if err != nil {
		return err
	}
	some := time.Duration(us) * time.Microsecond
	if g.source == WaitPressure && some > g.pressure {
		g.total += some - g.pressure
	}
	g.source, g.pressure, g.threads = WaitPressure, some, nil
	return nil
}

// estimate adds the run-queue waits of the threads in the cgroup at dir (and below it) since the last read, at most
// the time elapsed since then. A thread not seen at the last read counts its whole wait, within that bound.
func (g *groupWait) estimate(dir, procRoot string, now time.Time) error {
	tids, err := threadsIn(dir)
	if err != nil {
		return err
	}
	seen := make(map[int]time.Duration, len(tids))
	var waited time.Duration
	for _, tid := range tids {
		wait, err := readRunDelay(filepath.Join(procRoot, strconv.Itoa(tid), "schedstat"))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // the thread exited since the listing
		}
		if err != nil {
			return err
		}
		last, known := g.threads[tid]
		if known && wait >= last {
			waited += wait - last
		} else {
			waited += wait // a new thread, or a new one that reuses an old thread's ID
		}
		seen[tid] = wait
	}
	if g.source == WaitEstimate {
		g.total += min(waited, max(now.Sub(g.at), 0))
	}
	g.source, g.at, g.threads = WaitEstimate, now, seen
	return nil
}

// threadsIn lists the thread IDs in the cgroup at dir and every cgroup below it.
func threadsIn(dir string) ([]int, error) {
	var tids []int
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != dir && errors.Is(err, fs.ErrNotExist) {
				return nil // a child cgroup went away during the walk
			}
			return fileError("list", path, err)
		}
		if d.IsDir() || d.Name() != "tasks" {
			return nil
		}
		s, err := readString(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, field := range strings.Fields(s) {
			tid, err := strconv.Atoi(field)
			if err != nil {
				return fmt.Errorf("read %s: %q is not a thread ID: %w", path, field, err)
			}
			tids = append(tids, tid)
		}
		return nil
	})
	return tids, err
}

// readRunDelay reads a thread's time spent runnable on a run queue, the 2nd field of /proc/<tid>/schedstat (ns).
func readRunDelay(path string) (time.Duration, error) {
	s, err := readString(path)
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(s)
	if len(fields) < 2 {
		return 0, fmt.Errorf("read %s: %q has no run-queue wait (2nd field)", path, s)
	}
	ns, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read %s: run-queue wait: %w", path, err)
	}
	return time.Duration(ns), nil
}

// readPressureTotal reads the "some" line's total= of a v2 pressure file (µs).
func readPressureTotal(path string) (int64, error) {
	s, err := readString(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(s) {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "some" {
			continue
		}
		for _, field := range fields[1:] {
			if v, ok := strings.CutPrefix(field, "total="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("read %s: total: %w", path, err)
				}
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("read %s: no \"some ... total=\" line (the kernel needs pressure stall information, CONFIG_PSI and psi=1)", path)
}
