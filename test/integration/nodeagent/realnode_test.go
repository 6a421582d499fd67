//go:build integration

package nodeagent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

// spinEnv makes the test binary a CPU-bound workload of that many threads
// instead of running tests.
const spinEnv = "BACKFILL_NODEAGENT_SUITE_SPIN"

// spinSinks give each spinning thread a side effect of its own cache line.
var spinSinks [8]struct {
	n uint64
	_ [56]byte
}

// spin keeps threads CPUs busy until the process is killed.
func spin(threads int) {
	for i := range threads {
		go func() {
			runtime.LockOSThread()
			for {
				atomic.AddUint64(&spinSinks[i%len(spinSinks)].n, 1)
			}
		}()
	}
	select {}
}

// realNode is this machine's cgroups with a kubelet's top cgroup (the
// cgroupfs driver's kubepods) under a subtree of the test's own, which is
// the agent's --kubelet-cgroup-root, and a /proc of its own.
type realNode struct {
	fs *nodefs.FS
	// hierarchies are the mounts the agent reads: one under v2; cpu,
	// cpuacct and memory under v1, once each when mounted together.
	hierarchies []string
}

// newRealNode makes the subtree, removed when the test ends. It skips the
// test where it cannot run: not root, or no writable cgroup hierarchy with
// the cpu controller.
func newRealNode(t *testing.T) *realNode {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: it makes cgroups and moves processes into them")
	}
	const root = "/sys/fs/cgroup"
	n := &realNode{fs: &nodefs.FS{Root: root, Driver: nodefs.Cgroupfs, Parent: fmt.Sprintf("backfill-nodeagent-suite-%d", os.Getpid()), ProcRoot: "/proc"}}
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		n.fs.Version = nodefs.V2
		if !slices.Contains(n.subtreeControllers(), "cpu") {
			t.Skip("cgroup v2 without the cpu controller enabled at its root (cgroup.subtree_control)")
		}
		n.hierarchies = []string{root}
	} else {
		n.fs.Version = nodefs.V1
		for _, names := range [][]string{{"cpu", "cpu,cpuacct", "cpuacct,cpu"}, {"cpuacct", "cpu,cpuacct", "cpuacct,cpu"}, {"memory"}} {
			i := slices.IndexFunc(names, func(name string) bool { return isDir(filepath.Join(root, name)) })
			if i < 0 {
				t.Skipf("no cgroup v2 mount and no cgroup v1 %s hierarchy at %s", names[0], root)
			}
			if dir := filepath.Join(root, names[i]); !slices.Contains(n.hierarchies, dir) {
				n.hierarchies = append(n.hierarchies, dir)
			}
		}
	}
	for _, h := range n.hierarchies {
		dir := filepath.Join(h, n.fs.Parent)
		if err := os.Mkdir(dir, 0o755); err != nil {
			if errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
				t.Skipf("cgroup hierarchy %s is not writable: %v", h, err)
			}
			t.Fatal(err)
		}
		t.Cleanup(func() { removeCgroup(t, dir) })
		n.enableControllers(t, dir)
	}
	return n
}

func (n *realNode) subtreeControllers() []string {
	enabled, _ := os.ReadFile(filepath.Join(n.fs.Root, "cgroup.subtree_control"))
	return strings.Fields(string(enabled))
}

// dir is group's directory, "" the kubelet's top, in hierarchy h.
func (n *realNode) dir(h, group string) string {
	return filepath.Join(h, n.fs.Parent, "kubepods", group)
}

// cpuDir is group's directory in the cpu hierarchy.
func (n *realNode) cpuDir(group string) string { return n.dir(n.hierarchies[0], group) }

// makeGroup makes group in every hierarchy, removed when the test ends,
// with the kubelet's CPU weight (in v1 shares) and quota (µs per 100 ms,
// -1 none). Parents first; leaf marks a container's, which holds
// processes.
func (n *realNode) makeGroup(t *testing.T, group string, shares, quota int64, leaf bool) {
	t.Helper()
	for _, h := range n.hierarchies {
		dir := n.dir(h, group)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeCgroup(t, dir) })
		if !leaf {
			n.enableControllers(t, dir)
		}
	}
	n.writeCPU(t, group, shares, quota)
}

// writeCPU writes a cgroup's CPU weight and quota as the kubelet does.
func (n *realNode) writeCPU(t *testing.T, group string, shares, quota int64) {
	t.Helper()
	files := [][2]string{{"cpu.shares", strconv.FormatInt(shares, 10)}, {"cpu.cfs_quota_us", strconv.FormatInt(quota, 10)}}
	if n.fs.Version == nodefs.V2 {
		limit := "max"
		if quota >= 0 {
			limit = strconv.FormatInt(quota, 10)
		}
		// The kubelet's conversion of shares to a weight.
		files = [][2]string{{"cpu.weight", strconv.FormatInt(1+((shares-2)*9999)/262142, 10)}, {"cpu.max", limit + " 100000"}}
	}
	for _, f := range files {
		if err := writeCgroup(filepath.Join(n.cpuDir(group), f[0]), f[1]); err != nil {
			t.Fatalf("write %s of %q: %v", f[0], group, err)
		}
	}
}

// enableControllers lets cgroup v2 children of dir use cpu (and memory).
func (n *realNode) enableControllers(t *testing.T, dir string) {
	t.Helper()
	if n.fs.Version != nodefs.V2 {
		return
	}
	controllers := "+cpu"
	if slices.Contains(n.subtreeControllers(), "memory") {
		controllers += " +memory"
	}
	if err := writeCgroup(filepath.Join(dir, "cgroup.subtree_control"), controllers); err != nil {
		t.Fatalf("enable %s below %s: %v", controllers, dir, err)
	}
}

// moveInto moves process pid into group in every hierarchy.
func (n *realNode) moveInto(t *testing.T, group string, pid int) {
	t.Helper()
	for _, h := range n.hierarchies {
		if err := writeCgroup(filepath.Join(n.dir(h, group), "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			t.Fatalf("move process %d into %s: %v", pid, n.dir(h, group), err)
		}
	}
}

// cpu is a cgroup's CPU quota (µs per period, -1 none) and whether it is
// in the scheduler's idle class.
type cpu struct {
	quota int64
	idle  bool
}

func (n *realNode) cpu(t *testing.T, group string) cpu {
	t.Helper()
	q, err := n.fs.CPUQuota(group)
	if err != nil {
		t.Fatal(err)
	}
	idle, err := os.ReadFile(filepath.Join(n.cpuDir(group), "cpu.idle"))
	if err != nil {
		t.Fatal(err)
	}
	return cpu{quota: q.Quota, idle: strings.TrimSpace(string(idle)) == "1"}
}

// setIdle writes a cgroup's cpu.idle.
func (n *realNode) setIdle(t *testing.T, group string, idle bool) {
	t.Helper()
	value := map[bool]string{false: "0", true: "1"}[idle]
	if err := writeCgroup(filepath.Join(n.cpuDir(group), "cpu.idle"), value); err != nil {
		t.Fatalf("write cpu.idle of %q: %v", group, err)
	}
}

// startSpinner starts this test binary as a CPU spinner of threads threads
// and kills it by its PID when the test ends, before its cgroup goes.
func startSpinner(t *testing.T, threads int) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	// GOMAXPROCS fixed: the runtime would otherwise follow the ceiling.
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", spinEnv, threads), fmt.Sprintf("GOMAXPROCS=%d", threads))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive a test binary that dies
	if err := cmd.Start(); err != nil {
		t.Fatalf("start a spinning process: %v", err)
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

// removeCgroup removes an empty cgroup, retrying while the kernel still
// counts a just-killed process in it.
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

// writeCgroup writes a cgroup file as the kubelet does: no create, no
// append.
func writeCgroup(file, value string) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	return errors.Join(err, f.Close())
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}
