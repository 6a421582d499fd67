package nodefs

import (
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestWaitMeterV2ReadsCPUPressure(t *testing.T) {
	f := newFakeNode(t, V2, Systemd)
	addGroup(t, f, "kubepods-burstable.slice", -1)
	pressure := filepath.Join(f.path(cpuCtl, "kubepods-burstable.slice"), "cpu.pressure")
	writeFakeFile(t, pressure, "some avg10=1.50 avg60=0.80 avg300=0.20 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=999\n")
	m := f.NewWaitMeter()
	got, err := m.Read("kubepods-burstable.slice")
	if err != nil || got != 123456*time.Microsecond {
		t.Errorf("Read = %v, %v; want 123.456ms (the some line's total)", got, err)
	}

	writeFakeFile(t, pressure, "full avg10=0.00 avg60=0.00 avg300=0.00 total=999\n")
	if _, err := m.Read("kubepods-burstable.slice"); err == nil || !strings.Contains(err.Error(), "CONFIG_PSI") {
		t.Errorf("no some line: got %v, want an error naming pressure stall information", err)
	}
}

// On v1 the meter sums each thread's run-queue wait; threads come, go, and their IDs get reused.
func TestWaitMeterV1SumsThreadsIncreases(t *testing.T) {
	f := newFakeNode(t, V1, Cgroupfs)
	pod := "burstable/podU"
	addGroup(t, f, pod, -1)
	addGroup(t, f, path.Join(pod, "app0"), -1)
	addGroup(t, f, path.Join(pod, "sandbox0"), -1)
	m := f.NewWaitMeter()

	steps := []struct {
		name    string
		app     string        // the container's tasks
		sandbox string        // the sandbox's tasks
		waits   map[int]int64 // /proc/<tid>/schedstat run-queue wait, ns; a tid not here has exited
		want    time.Duration
	}{
		{"first read counts each thread's wait so far", "10\n11\n", "1\n",
			map[int]int64{10: 100, 11: 200, 1: 7}, 307},
		{"an exited thread drops out, a new one counts whole", "10\n12\n", "1\n",
			map[int]int64{10: 150, 12: 30, 1: 7}, 307 + 50 + 30},
		{"a reused thread ID counts as a new thread", "12\n", "1\n",
			map[int]int64{12: 5, 1: 7}, 387 + 5},
		{"a listed thread gone from /proc is skipped", "12\n13\n", "1\n",
			map[int]int64{12: 5, 1: 9}, 392 + 2},
		{"no threads leaves the total", "", "",
			map[int]int64{}, 394},
	}
	for _, s := range steps {
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
