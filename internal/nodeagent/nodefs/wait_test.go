package nodefs

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pressure is a cpu.pressure whose "some" total is some.
func pressure(some time.Duration) string {
	return fmt.Sprintf("some avg10=1.50 avg60=0.80 avg300=0.20 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=999\n", some.Microseconds())
}

// fakeClock is a meter's clock a test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// withClock is a new meter of f on a clock the test moves.
func withClock(f *FS) (*WaitMeter, *fakeClock) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := f.NewWaitMeter()
	m.now = clock.now
	return m, clock
}

// hybrid gives f a unified hierarchy, as systemd mounts one beside v1's controllers.
func hybrid(t *testing.T, f *FS) {
	t.Helper()
	f.Unified = filepath.Join(f.Root, "unified")
	writeFakeFile(t, filepath.Join(f.Unified, "cgroup.controllers"), "")
}

// unifiedPressure is group's cpu.pressure in f's unified hierarchy.
func unifiedPressure(f *FS, group string) string {
	return filepath.Join(f.Unified, f.Parent, f.top(), group, "cpu.pressure")
}

// setThreads makes group's one cgroup hold the threads of waits, each with its run-queue wait in /proc, and no other.
func setThreads(t *testing.T, f *FS, group string, waits map[int]time.Duration) {
	t.Helper()
	var tasks strings.Builder
	if err := os.RemoveAll(f.ProcRoot); err != nil {
		t.Fatal(err)
	}
	for tid, wait := range waits {
		fmt.Fprintf(&tasks, "%d\n", tid)
		writeFakeFile(t, filepath.Join(f.ProcRoot, strconv.Itoa(tid), "schedstat"), "5000 "+strconv.FormatInt(wait.Nanoseconds(), 10)+" 3\n")
	}
	writeFakeFile(t, filepath.Join(f.path(cpuCtl, group), "tasks"), tasks.String())
}

// One definition, read alike: where the kernel counts "some" (v2, and v1 with a unified hierarchy) the meter reads it;
// on v1 without one it estimates it from the threads' waits, and the estimate is "some" while they wait one at a time
// and never more than the time elapsed when they wait together.
func TestWaitMeterReadsAlike(t *testing.T) {
	const group = "burstable/podU"
	// Each step is one second, in which the pod's threads waited runnable for these (ns of /proc/<tid>/schedstat,
	// as it grows), and the kernel counted "some" for so long.
	type second struct {
		threads map[int]time.Duration // each thread's run-queue wait so far
		some    time.Duration         // the kernel's "some" total so far
	}
	steps := []struct {
		name string
		second
		wantPressure, wantEstimate time.Duration // the meter's total after the step
	}{
		{"the first read counts nothing: it is where the wait starts",
			second{map[int]time.Duration{10: 5 * time.Second, 11: time.Second}, 4 * time.Second}, 0, 0},
		{"one thread waits 300ms: both read 300ms",
			second{map[int]time.Duration{10: 5300 * time.Millisecond, 11: time.Second}, 4300 * time.Millisecond},
			300 * time.Millisecond, 300 * time.Millisecond},
		{"two threads wait 200ms each, one after the other: both read 400ms",
			second{map[int]time.Duration{10: 5500 * time.Millisecond, 11: 1200 * time.Millisecond}, 4700 * time.Millisecond},
			700 * time.Millisecond, 700 * time.Millisecond},
		{"two threads wait 900ms each at once: some reads 900ms, the estimate at most the second",
			second{map[int]time.Duration{10: 6400 * time.Millisecond, 11: 2100 * time.Millisecond}, 5600 * time.Millisecond},
			1600 * time.Millisecond, 1700 * time.Millisecond},
		{"a new thread counts what it waited",
			second{map[int]time.Duration{10: 6400 * time.Millisecond, 11: 2100 * time.Millisecond, 12: 100 * time.Millisecond}, 5700 * time.Millisecond},
			1700 * time.Millisecond, 1800 * time.Millisecond},
		{"no wait: nothing more",
			second{map[int]time.Duration{10: 6400 * time.Millisecond, 11: 2100 * time.Millisecond, 12: 100 * time.Millisecond}, 5700 * time.Millisecond},
			1700 * time.Millisecond, 1800 * time.Millisecond},
	}
	nodes := map[string]struct {
		fs     func(t *testing.T) *FS
		source string
	}{
		"cgroup v2": {
			fs: func(t *testing.T) *FS {
				f := newFakeNode(t, V2, Cgroupfs)
				addGroup(t, f, "burstable", -1)
				addGroup(t, f, group, -1)
				return f
			},
			source: WaitPressure,
		},
		"cgroup v1 with a unified hierarchy": {
			fs: func(t *testing.T) *FS {
				f := newFakeNode(t, V1, Cgroupfs)
				hybrid(t, f)
				addGroup(t, f, group, -1)
				writeFakeFile(t, unifiedPressure(f, group), pressure(0))
				return f
			},
			source: WaitPressure,
		},
		"cgroup v1": {
			fs: func(t *testing.T) *FS {
				f := newFakeNode(t, V1, Cgroupfs)
				addGroup(t, f, group, -1)
				return f
			},
			source: WaitEstimate,
		},
	}
	for name, node := range nodes {
		t.Run(name, func(t *testing.T) {
			f := node.fs(t)
			m, clock := withClock(f)
			for _, s := range steps {
				clock.t = clock.t.Add(time.Second)
				setThreads(t, f, group, s.threads)
				switch {
				case f.Version == V2:
					writeFakeFile(t, filepath.Join(f.path(cpuCtl, group), "cpu.pressure"), pressure(s.some))
				case f.Unified != "":
					writeFakeFile(t, unifiedPressure(f, group), pressure(s.some))
				}
				got, err := m.Read(group)
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				want := s.wantPressure
				if node.source == WaitEstimate {
					want = s.wantEstimate
				}
				if got != want {
					t.Errorf("%s: Read = %v, want %v", s.name, got, want)
				}
			}
		})
	}
}

// The estimate of v1 without a unified hierarchy, read by read.
func TestWaitMeterV1Estimate(t *testing.T) {
	f := newFakeNode(t, V1, Cgroupfs)
	pod := "burstable/podU"
	addGroup(t, f, pod, -1)
	addGroup(t, f, path.Join(pod, "app0"), -1)
	addGroup(t, f, path.Join(pod, "sandbox0"), -1)
	m, clock := withClock(f)

	steps := []struct {
		name    string
		elapsed time.Duration // since the last read
		app     string        // the container's tasks
		sandbox string        // the sandbox's tasks
		waits   map[int]int64 // /proc/<tid>/schedstat run-queue wait, ns; a tid not here has exited
		want    time.Duration
	}{
		{"the first read counts nothing", time.Second, "10\n11\n", "1\n",
			map[int]int64{10: 100, 11: 200, 1: 7}, 0},
		{"the threads of every container count; an exited one drops out, a new one counts whole", time.Second, "10\n12\n", "1\n",
			map[int]int64{10: 150, 12: 30, 1: 9}, 50 + 30 + 2},
		{"a reused thread ID counts as a new thread", time.Second, "12\n", "1\n",
			map[int]int64{12: 5, 1: 9}, 82 + 5},
		{"a listed thread gone from /proc is skipped", time.Second, "12\n13\n", "1\n",
			map[int]int64{12: 5, 1: 11}, 87 + 2},
		{"waits together beyond the time elapsed count the time elapsed", 100, "12\n", "1\n",
			map[int]int64{12: 85, 1: 111}, 89 + 100},
		{"no time elapsed, nothing counts", 0, "12\n", "1\n",
			map[int]int64{12: 95, 1: 111}, 189},
		{"no threads leaves the total", time.Second, "", "",
			map[int]int64{}, 189},
	}
	for _, s := range steps {
		clock.t = clock.t.Add(s.elapsed)
		writeFakeFile(t, filepath.Join(f.path(cpuCtl, path.Join(pod, "app0")), "tasks"), s.app)
		writeFakeFile(t, filepath.Join(f.path(cpuCtl, path.Join(pod, "sandbox0")), "tasks"), s.sandbox)
		if err := os.RemoveAll(f.ProcRoot); err != nil {
			t.Fatal(err)
		}
		for tid, wait := range s.waits {
			writeFakeFile(t, filepath.Join(f.ProcRoot, strconv.Itoa(tid), "schedstat"), "5000 "+strconv.FormatInt(wait, 10)+" 3\n")
		}
		got, err := m.Read(pod)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got != s.want {
			t.Errorf("%s: Read = %v, want %v", s.name, got, s.want)
		}
	}

	if err := os.RemoveAll(f.path(cpuCtl, pod)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Read(pod); err == nil || !strings.Contains(err.Error(), "the cgroup is gone") {
		t.Errorf("pod gone: got %v, want an error saying the cgroup is gone", err)
	}
	if _, kept := m.groups[pod]; kept {
		t.Error("the meter keeps the threads of a pod that is gone")
	}
}

func TestWaitMeterPressure(t *testing.T) {
	const group = "kubepods-burstable.slice"
	cases := map[string]struct {
		files   []string // the cpu.pressure of each read
		want    []time.Duration
		wantErr string // of the last read
	}{
		"what some's total grew by": {
			files: []string{pressure(4 * time.Second), pressure(4*time.Second + 123456*time.Microsecond)},
			want:  []time.Duration{0, 123456 * time.Microsecond},
		},
		"a total that went back (a new cgroup of the name) counts nothing, then grows from there": {
			files: []string{pressure(4 * time.Second), pressure(5 * time.Second), pressure(time.Second), pressure(2 * time.Second)},
			want:  []time.Duration{0, time.Second, time.Second, 2 * time.Second},
		},
		"no some line": {
			files:   []string{"full avg10=0.00 avg60=0.00 avg300=0.00 total=999\n"},
			wantErr: "CONFIG_PSI",
		},
		"a total that is not a number": {
			files:   []string{"some avg10=0.00 avg60=0.00 avg300=0.00 total=many\n"},
			wantErr: "total",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeNode(t, V2, Systemd)
			addGroup(t, f, group, -1)
			m := f.NewWaitMeter()
			file := filepath.Join(f.path(cpuCtl, group), "cpu.pressure")
			for i, content := range tc.files {
				writeFakeFile(t, file, content)
				got, err := m.Read(group)
				if i == len(tc.files)-1 && tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Errorf("got %v, %v; want an error saying %q", got, err, tc.wantErr)
					}
					return
				}
				if err != nil || got != tc.want[i] {
					t.Errorf("read %d: %v, %v; want %v", i, got, err, tc.want[i])
				}
			}
		})
	}
}

// On a v1 node with a unified hierarchy, a group the unified hierarchy does not hold is estimated, and one that
// appears there later is read from its pressure from then on, its total going on.
func TestWaitMeterV1HybridFallsBack(t *testing.T) {
	const group = "besteffort/podU"
	f := newFakeNode(t, V1, Cgroupfs)
	hybrid(t, f)
	addGroup(t, f, group, -1)
	if got := f.WaitSource(); got != "pressure (unified hierarchy), else run-queue estimate" {
		t.Errorf("WaitSource = %q", got)
	}
	m, clock := withClock(f)
	read := func(threads time.Duration, some string) time.Duration {
		t.Helper()
		clock.t = clock.t.Add(time.Second)
		setThreads(t, f, group, map[int]time.Duration{10: threads})
		if some != "" {
			writeFakeFile(t, unifiedPressure(f, group), some)
		}
		got, err := m.Read(group)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for i, step := range []struct {
		threads time.Duration
		some    string
		want    time.Duration
	}{
		{threads: time.Second, want: 0},
		{threads: 1200 * time.Millisecond, want: 200 * time.Millisecond},
		// The unified cgroup appears: its first read counts nothing.
		{threads: 1500 * time.Millisecond, some: pressure(50 * time.Second), want: 200 * time.Millisecond},
		{threads: 9 * time.Second, some: pressure(50*time.Second + 100*time.Millisecond), want: 300 * time.Millisecond},
	} {
		if got := read(step.threads, step.some); got != step.want {
			t.Errorf("read %d: %v, want %v", i, got, step.want)
		}
	}
}

func TestWaitSource(t *testing.T) {
	for _, tc := range []struct {
		fs   *FS
		want string
	}{
		{&FS{Version: V2}, WaitPressure},
		{&FS{Version: V1, Unified: "/sys/fs/cgroup/unified"}, "pressure (unified hierarchy), else run-queue estimate"},
		{&FS{Version: V1}, WaitEstimate},
	} {
		if got := tc.fs.WaitSource(); got != tc.want {
			t.Errorf("v%d, unified %q: WaitSource = %q, want %q", tc.fs.Version, tc.fs.Unified, got, tc.want)
		}
	}
}
