//go:build linux

package nodefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestRealCgroupWait measures a pod's CPU wait on this machine's own cgroups, laid out as the kubelet's cgroupfs
// driver lays out a burstable pod: three threads that spin on one CPU, so that at any moment at least two of them
// wait. "Some" is then about all the time elapsed, while their waits summed are about twice it. Each way this node
// offers reads it alike: the pressure the kernel counts (cgroup v2, or v1's unified hierarchy) and, on v1, the estimate
// from the threads' run-queue waits, which stops at the time elapsed.
func TestRealCgroupWait(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it makes cgroups and moves processes into them")
	}
	const root = "/sys/fs/cgroup"
	f := &FS{Root: root, Driver: Cgroupfs, Parent: fmt.Sprintf("backfill-nodefs-wait-%d", os.Getpid()), ProcRoot: "/proc"}
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		f.Version = V2
	} else if f.Version = V1; !isDir(f.mount(cpuCtl)) {
		t.Skip("no cgroup v2 mount and no cgroup v1 cpu hierarchy at " + root)
	}
	if _, err := os.Stat("/proc/pressure/cpu"); err != nil && f.Version == V2 {
		t.Skip("the kernel counts no pressure stall information (CONFIG_PSI, psi=1)")
	}
	// As Detect finds it; Detect itself wants a kubelet's kubepods, which a test machine may not have.
	if unified := filepath.Join(root, "unified"); f.Version == V1 && isFile(filepath.Join(unified, "cgroup.controllers")) {
		f.Unified = unified
	}
	pod := f.PodGroup(corev1.PodQOSBurstable, "7d1e0a3c-2b4f-4e6a-8c9d-0f1e2d3c4b5a")
	makeRealGroups(t, f, pod)

	var pids []int
	for range 3 {
		pid := startSpinnerAs(t, "cpu0")
		for _, dir := range realDirs(f, pod) {
			if err := writeCgroupFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
				t.Fatalf("move the spinning process %d into %s: %v", pid, dir, err)
			}
		}
		pids = append(pids, pid)
	}
	waitFor(t, "the spinning processes to use CPU in their cgroup", func() bool {
		used, err := f.CPUUsage(pod)
		return err == nil && used > 0
	})

	// The ways this node offers: the pressure where the kernel counts it for the pod, v1's estimate where not.
	meters := map[string]*WaitMeter{}
	if f.pressureFile(pod) != "" {
		meters[WaitPressure] = f.NewWaitMeter()
	}
	if f.Version == V1 {
		estimated := *f
		estimated.Unified = ""
		meters[WaitEstimate] = estimated.NewWaitMeter()
	}
	before := map[string]time.Duration{}
	for source, m := range meters {
		v, err := m.Read(pod)
		if err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		before[source] = v
	}
	threadsBefore := threadWaits(t, pids)
	start := time.Now()
	ticker := time.NewTicker(100 * time.Millisecond)
	for range ticker.C {
		if time.Since(start) >= 2*time.Second {
			break
		}
	}
	ticker.Stop()
	elapsed := time.Since(start)
	summed := threadWaits(t, pids) - threadsBefore
	t.Logf("over %v the spinners' run-queue waits summed to %v", elapsed.Round(time.Millisecond), summed.Round(time.Millisecond))
	for source, m := range meters {
		got, err := m.Read(pod)
		if err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		got -= before[source]
		t.Logf("%s: waited %v", source, got.Round(time.Millisecond))
		// At least two of three threads on one CPU wait all the time: "some" is the time elapsed, give or take
		// the moments between the reads.
		if share := got.Seconds() / elapsed.Seconds(); share < 0.5 || share > 1.1 {
			t.Errorf("%s: the pod waited %v in %v (%.2f of the time), want about all of it and never more", source, got, elapsed, share)
		}
	}
	if f.Version == V1 && summed.Seconds() < 1.2*elapsed.Seconds() {
		t.Errorf("the threads' waits summed to %v in %v: three threads on one CPU should wait about twice the time together", summed, elapsed)
	}
}

// threadWaits is the run-queue wait of every thread of the processes pids so far, summed.
func threadWaits(t *testing.T, pids []int) time.Duration {
	t.Helper()
	var sum time.Duration
	for _, pid := range pids {
		tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			wait, err := readRunDelay(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name(), "schedstat"))
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
				continue // the thread exited since the listing
			}
			if err != nil {
				t.Fatal(err)
			}
			sum += wait
		}
	}
	return sum
}
