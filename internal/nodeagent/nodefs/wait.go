package nodefs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// WaitMeter measures, monotonically, how long a group's tasks waited runnable for a CPU: v2 the "some total" of
// cpu.pressure (µs); v1 the sum over the group's threads (every descendant cgroup's tasks) of the run-queue wait in
// ProcRoot/<tid>/schedstat (2nd field, ns), summing only increases per thread since threads come and go.
type WaitMeter struct {
	fs *FS

	mu     sync.Mutex
	groups map[string]*groupWait // v1 only
}

// groupWait is what a v1 meter remembers of one group between reads.
type groupWait struct {
	total   time.Duration
	threads map[int]time.Duration // each thread's wait at the last read
}

// NewWaitMeter starts a meter with no history: on v1, a thread first seen counts its whole wait so far.
func (f *FS) NewWaitMeter() *WaitMeter {
	return &WaitMeter{fs: f, groups: map[string]*groupWait{}}
}

// Read is how long group's tasks have waited for a CPU so far.
func (m *WaitMeter) Read(group string) (time.Duration, error) {
	dir := m.fs.path(cpuCtl, group)
	if m.fs.Version == V2 {
		us, err := readPressureTotal(filepath.Join(dir, "cpu.pressure"))
		return time.Duration(us) * time.Microsecond, err
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	tids, err := threadsIn(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			delete(m.groups, group) // the pod is gone: do not keep its threads forever
		}
		return 0, err
	}
	g := m.groups[group]
	if g == nil {
		g = &groupWait{}
		m.groups[group] = g
	}
	seen := make(map[int]time.Duration, len(tids))
	for _, tid := range tids {
		wait, err := readRunDelay(filepath.Join(m.fs.ProcRoot, strconv.Itoa(tid), "schedstat"))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // the thread exited since the listing
		}
		if err != nil {
			return 0, err
		}
		last, known := g.threads[tid]
		if known && wait >= last {
			g.total += wait - last
		} else {
			g.total += wait // a new thread, or a new one that reuses an old thread's ID
		}
		seen[tid] = wait
	}
	g.threads = seen
	return g.total, nil
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
