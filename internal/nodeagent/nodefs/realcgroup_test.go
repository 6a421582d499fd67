//go:build linux

package nodefs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
)

// spinEnv makes the test binary a CPU-bound workload instead of running tests: "1" on any CPU, "cpu0" on the first
// CPU alone.
const spinEnv = "BACKFILL_NODEFS_TEST_SPIN"

// spinSink gives the workload's loop a side effect, so it spins on one CPU until killed.
var spinSink uint64

func TestMain(m *testing.M) {
	switch os.Getenv(spinEnv) {
	case "cpu0":
		// The spinning thread only, which the loop below runs on: the runtime's other threads barely run.
		runtime.LockOSThread()
		mask := uint64(1)
		if _, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask))); errno != 0 {
			fmt.Fprintf(os.Stderr, "pin the spinning thread to CPU 0: %v\n", errno)
			os.Exit(1)
		}
		fallthrough
	case "1":
		for {
			spinSink++
		}
	}
	os.Exit(m.Run())
}

// TestRealCgroup caps a spinning process with SetPodCPUCeiling on this machine's own cgroups, laid out as the
// kubelet's cgroupfs driver lays out a best-effort pod, under a subtree of its own.
func TestRealCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it makes cgroups and moves a process into them")
	}
	const root = "/sys/fs/cgroup"
	f := &FS{Root: root, Driver: Cgroupfs, Parent: fmt.Sprintf("backfill-nodefs-test-%d", os.Getpid()), ProcRoot: "/proc"}
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		f.Version = V2
	} else if f.Version = V1; !isDir(f.mount(cpuCtl)) {
		t.Skip("no cgroup v2 mount and no cgroup v1 cpu hierarchy at " + root)
	}
	const cid = "4f3c2b1a0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3c"
	pod := f.PodGroup(corev1.PodQOSBestEffort, "0c8f6a2e-3b1d-4e5f-9a7b-1c2d3e4f5a6b")
	container := path.Join(pod, cid)
	makeRealGroups(t, f, container)

	detected, err := Detect(root, f.Parent, f.ProcRoot)
	if err != nil {
		t.Fatalf("Detect on the tree just made: %v", err)
	}
	if detected.Version != f.Version || detected.Driver != Cgroupfs {
		t.Errorf("Detect = v%d %s, want v%d cgroupfs", detected.Version, detected.Driver, f.Version)
	}

	pid := startSpinner(t)
	for _, dir := range realDirs(f, container) {
		if err := writeCgroupFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			t.Fatalf("move the spinning process %d into %s: %v", pid, dir, err)
		}
	}
	waitFor(t, "the spinning process to use CPU in its cgroup", func() bool {
		used, err := f.CPUUsage(container)
		return err == nil && used > 0
	})

	limits := Limits{Pod: 50000, Containers: map[string]int64{cid: 50000}}
	if err := f.SetPodCPUCeiling(pod, -1, limits); err != nil {
		t.Fatalf("set the kubelet's quotas: %v", err)
	}
	wantQuotas(t, f, map[string]int64{pod: 50000, container: 50000})
	t.Logf("at the kubelet's limit of 0.5 cores: %.2f cores", coresUsed(t, f, pod, 2*time.Second))

	// A pod lowered before its container makes a v1 kernel answer EINVAL: this passes only in the safe order.
	if err := f.SetPodCPUCeiling(pod, 20000, limits); err != nil {
		t.Fatalf("ceiling 0.2 cores: %v", err)
	}
	wantQuotas(t, f, map[string]int64{pod: 20000, container: 20000})
	throttledBefore := throttled(t, f, pod, container)
	meter := f.NewWaitMeter()
	waitBefore, err := meter.Read(pod)
	if err != nil {
		t.Fatalf("WaitMeter: %v", err)
	}
	capped := coresUsed(t, f, pod, 2*time.Second)
	throttledMore := throttled(t, f, pod, container) - throttledBefore
	waitAfter, err := meter.Read(pod)
	if err != nil {
		t.Fatalf("WaitMeter: %v", err)
	}
	t.Logf("at a ceiling of 0.2 cores: %.2f cores, throttled %v more, waited runnable %v more", capped, throttledMore, waitAfter-waitBefore)
	if capped > 0.35 || capped < 0.02 {
		t.Errorf("at a ceiling of 0.2 cores the pod used %.2f cores, want about 0.2", capped)
	}
	if throttledMore <= 0 {
		t.Error("the pod's throttled time did not grow under a ceiling below its use")
	}
	if waitAfter < waitBefore {
		t.Errorf("WaitMeter went back from %v to %v", waitBefore, waitAfter)
	}

	if err := f.SetPodCPUCeiling(pod, -1, limits); err != nil {
		t.Fatalf("lift the ceiling: %v", err)
	}
	wantQuotas(t, f, map[string]int64{pod: 50000, container: 50000})
	t.Logf("lifted, back at the kubelet's limit of 0.5 cores: %.2f cores", coresUsed(t, f, pod, time.Second))

	if ws, err := f.MemoryWorkingSet(container); err != nil || ws <= 0 {
		t.Errorf("MemoryWorkingSet of the container = %d, %v; want its process's memory", ws, err)
	}
}

// makeRealGroups makes group and every level above it under f.Parent, in each hierarchy, and removes them bottom-up
// when the test ends. It skips the test when the cgroup filesystem is not writable.
func makeRealGroups(t *testing.T, f *FS, group string) {
	t.Helper()
	var controllers string
	if f.Version == V2 {
		enabled, err := os.ReadFile(filepath.Join(f.Root, "cgroup.subtree_control"))
		if err != nil || !slices.Contains(strings.Fields(string(enabled)), "cpu") {
			t.Skip("cgroup v2 without the cpu controller enabled at its root (cgroup.subtree_control)")
		}
		controllers = "+cpu"
		if slices.Contains(strings.Fields(string(enabled)), "memory") {
			controllers += " +memory"
		}
	}
	levels := []string{f.Parent, path.Join(f.Parent, f.top())} // the test's own subtree first, removed last
	for name := range strings.SplitSeq(group, "/") {
		levels = append(levels, path.Join(levels[len(levels)-1], name))
	}
	for _, hierarchy := range realHierarchies(f) {
		for i, level := range levels {
			dir := filepath.Join(hierarchy, level)
			if err := os.Mkdir(dir, 0o755); err != nil {
				if i == 0 && (errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)) {
					t.Skipf("cgroup hierarchy %s is not writable: %v", hierarchy, err)
				}
				t.Fatal(err)
			}
			t.Cleanup(func() { removeCgroup(t, dir) })
			if controllers != "" && i < len(levels)-1 {
				if err := writeCgroupFile(filepath.Join(dir, "cgroup.subtree_control"), controllers); err != nil {
					t.Fatalf("enable %s below %s: %v", controllers, dir, err)
				}
			}
		}
	}
}

// realHierarchies are the directories SetPodCPUCeiling and the readers use: one under v2; cpu, cpuacct and memory
// under v1, once each when mounted together, and the unified hierarchy when f has one.
func realHierarchies(f *FS) []string {
	var dirs []string
	for _, controller := range []string{cpuCtl, cpuacctCtl, memoryCtl} {
		if dir := f.mount(controller); !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
	}
	if f.Unified != "" {
		dirs = append(dirs, f.Unified)
	}
	return dirs
}

// realDirs is group's directory in each hierarchy.
func realDirs(f *FS, group string) []string {
	var dirs []string
	for _, hierarchy := range realHierarchies(f) {
		dirs = append(dirs, filepath.Join(hierarchy, f.Parent, f.top(), group))
	}
	return dirs
}

// removeCgroup removes an empty cgroup, retrying while the kernel still counts a just-reaped process in it.
func removeCgroup(t *testing.T, dir string) {
	deadline := time.Now().Add(5 * time.Second)
	ticker := time.NewTicker(50 * time.Millisecond)
	defer ticker.Stop()
	for {
		err := syscall.Rmdir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			t.Errorf("remove cgroup %s: %v (remove it by hand with rmdir)", dir, err)
			return
		}
		<-ticker.C
	}
}

// startSpinner starts this test binary as a one-thread CPU spinner and stops it by its PID when the test ends.
func startSpinner(t *testing.T) int {
	t.Helper()
	return startSpinnerAs(t, "1")
}

// startSpinnerAs starts a spinner of mode (spinEnv's values).
func startSpinnerAs(t *testing.T, mode string) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), spinEnv+"="+mode)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive a test binary that dies
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the spinning process: %v", err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Errorf("kill the spinning process %d: %v", pid, err)
		}
		_ = cmd.Wait() // it was killed: the error says so
	})
	return pid
}

func wantQuotas(t *testing.T, f *FS, want map[string]int64) {
	t.Helper()
	for group, quota := range want {
		got, err := f.CPUQuota(group)
		if err != nil {
			t.Fatal(err)
		}
		if got.Quota != quota {
			t.Errorf("quota of %s = %d, want %d", group, got.Quota, quota)
		}
	}
}

func throttled(t *testing.T, f *FS, groups ...string) time.Duration {
	t.Helper()
	var sum time.Duration
	for _, group := range groups {
		d, err := f.CPUThrottled(group)
		if err != nil {
			t.Fatal(err)
		}
		sum += d
	}
	return sum
}

// coresUsed is group's CPU use over a window, in cores.
func coresUsed(t *testing.T, f *FS, group string, window time.Duration) float64 {
	t.Helper()
	start := time.Now()
	before, err := f.CPUUsage(group)
	if err != nil {
		t.Fatal(err)
	}
	ticker := time.NewTicker(window / 10)
	defer ticker.Stop()
	for range ticker.C {
		if time.Since(start) >= window {
			break
		}
	}
	after, err := f.CPUUsage(group)
	if err != nil {
		t.Fatal(err)
	}
	return (after - before).Seconds() / time.Since(start).Seconds()
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	ticker := time.NewTicker(20 * time.Millisecond)
	defer ticker.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-ticker.C
	}
}
