//go:build linux

package nodeagent

import (
	"context"
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
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

// spinEnv makes the test binary a CPU-bound workload of that many threads
// instead of running tests.
const spinEnv = "BACKFILL_NODEAGENT_TEST_SPIN"

// spinSinks give each spinning thread a side effect of its own cache line.
var spinSinks [8]struct {
	n uint64
	_ [56]byte
}

func TestMain(m *testing.M) {
	if threads, err := strconv.Atoi(os.Getenv(spinEnv)); err == nil && threads > 0 {
		spin(threads)
	}
	os.Exit(m.Run())
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

// The real-cgroup test's node: 2 CPUs, 75% of them for online, system and
// offline together, offline keeping at least 5%.
const (
	realCPUs      = 2
	realThreshold = 75
	realFloor     = 5
	realInterval  = time.Second // the default; a quota rewritten more often lets offline run over it (the kernel refills it on a write)
	onlineCID     = "9a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
	offlineCID    = "1f2e3d4c5b6a79880716f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a09"
	onlineQuota   = 190_000 // the online pod's limit, 1.9 cores, as the kubelet writes it
)

// TestRealCgroupAgent runs the agent on this machine's own cgroups, laid out
// under a subtree of its own as the kubelet's cgroupfs driver lays out an
// online Burstable pod and an offline BestEffort pod on reclaimed capacity,
// each with a real CPU-bound process: while online is idle, offline gets
// the threshold; when online works, the offline ceiling shrinks to what
// online leaves; the online pod's cgroups are never written; on exit the
// ceiling is lifted.
//
// The node is the test's own pods: its /proc/stat reports 2 CPUs busy with
// exactly what they use. Everything else the agent reads and writes is the
// kernel's. The machine's other work (a build, the other packages' tests of
// `go test ./...`) would be the node's system use, which the agent rightly
// yields to: on a busy machine it would hold offline at the floor and hide
// the behaviour under test.
func TestRealCgroupAgent(t *testing.T) {
	n := newRealNode(t)
	online := Pod{Namespace: "web", Name: "web-0", UID: "5d7c1e2a-8b3f-4a6c-9e0d-1f2a3b4c5d6e", QOS: corev1.PodQOSBurstable,
		Limits: nodefs.Limits{Pod: onlineQuota, Containers: map[string]int64{onlineCID: onlineQuota}}, Weight: 1900}
	offline := Pod{Namespace: "ml", Name: "train-worker-0", UID: "b2e4f6a8-1c3d-4e5f-8a9b-0c1d2e3f4a5b", QOS: corev1.PodQOSBestEffort,
		Reclaimed: true, Limits: nodefs.Limits{Pod: -1, Containers: map[string]int64{offlineCID: -1}}, Weight: 2000}
	onlineGroup, offlineGroup := n.fs.PodGroup(online.QOS, online.UID), n.fs.PodGroup(offline.QOS, offline.UID)
	onlineContainer, offlineContainer := path.Join(onlineGroup, onlineCID), path.Join(offlineGroup, offlineCID)

	// The kubelet's values: the node's CPUs weighed for kubepods, the
	// burstable class its pods' requests (1 core), best effort the least.
	n.makeGroup(t, "", n.weights(2048, -1))
	n.makeGroup(t, n.fs.QOSGroup(corev1.PodQOSBurstable), n.weights(1024, -1))
	n.makeGroup(t, onlineGroup, n.weights(1024, onlineQuota))
	n.makeGroup(t, onlineContainer, n.weights(1024, onlineQuota))
	n.makeGroup(t, n.fs.QOSGroup(corev1.PodQOSBestEffort), n.weights(2, -1))
	n.makeGroup(t, offlineGroup, n.weights(2, -1))
	n.makeGroup(t, offlineContainer, n.weights(2, -1))

	// Online is an idle service at first: its process is stopped.
	onlinePID := startSpinner(t, 1)
	if err := syscall.Kill(onlinePID, syscall.SIGSTOP); err != nil {
		t.Fatalf("stop the online process %d: %v", onlinePID, err)
	}
	n.moveInto(t, onlineContainer, onlinePID)
	n.moveInto(t, offlineContainer, startSpinner(t, 2))
	n.scopeProc(t, onlineContainer, offlineContainer)

	// Everything the agent must never write: the online pod's cgroups and
	// every QoS class's.
	untouched := []string{"", n.fs.QOSGroup(corev1.PodQOSBurstable), n.fs.QOSGroup(corev1.PodQOSBestEffort), onlineGroup, onlineContainer}
	before := n.snapshot(t, untouched)

	agent, err := New(Config{FS: n.fs, Pods: staticPods{online, offline}, Log: testr.New(t), Registry: prometheus.NewRegistry(),
		Settings: Settings{Interval: realInterval, CPUThreshold: realThreshold, CPUFloor: realFloor, CPUGrowth: 25}})
	if err != nil {
		t.Fatal(err)
	}
	threshold, floor := float64(realCPUs)*realThreshold/100, float64(realCPUs)*realFloor/100
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- agent.Run(ctx) }()
	stopped := false
	stop := func() error {
		if !stopped {
			stopped = true
			cancel()
			select {
			case err := <-done:
				return err
			case <-time.After(10 * time.Second):
				return errors.New("Run did not return within 10 s of its context's end")
			}
		}
		return nil
	}
	t.Cleanup(func() { _ = stop() }) // before the processes and cgroups go
	throttledStart := n.throttled(t, offlineGroup)

	// Online idle: offline may use the threshold.
	waitReal(t, 10*time.Second, "the agent to set an offline ceiling", func() bool { return n.quota(t, offlineGroup) > 0 })
	// One offline pod gets the ceiling whole. A tick writes the cgroup
	// before it publishes Last: the two agree between ticks.
	waitReal(t, 5*time.Second, "the offline pod's CPU quota to be the agent's whole ceiling", func() bool {
		return abs(agent.Last().Ceiling-n.quota(t, offlineGroup)) < 0.001
	})
	idle := n.measure(t, onlineGroup, offlineGroup)
	t.Logf("online idle: online %.2f cores, offline %.2f cores under a ceiling of %.2f; the agent saw %+v", idle.online, idle.offline, idle.quota, agent.Last())
	// The node's /proc/stat is written every 10 ms, its cgroups read at
	// once: a tick may see a little system use.
	if idle.quota > threshold+0.001 || idle.quota < threshold-0.25 {
		t.Errorf("ceiling %.2f cores with online idle, want the threshold of %.2f cores", idle.quota, threshold)
	}
	if idle.offline > idle.highest+0.15 {
		t.Errorf("offline used %.2f cores under a ceiling of at most %.2f cores", idle.offline, idle.highest)
	}

	// Online works: the ceiling shrinks to what online leaves, at once.
	if err := syscall.Kill(onlinePID, syscall.SIGCONT); err != nil {
		t.Fatalf("continue the online process %d: %v", onlinePID, err)
	}
	waitReal(t, 10*time.Second, "the offline ceiling to shrink as online works", func() bool {
		return n.quota(t, offlineGroup) <= idle.quota-0.3
	})
	// The tick that first shrank it may have seen online work for part of
	// its interval only: measure from the next one.
	shrunk := agent.Last().At
	waitReal(t, 5*time.Second, "a tick that saw online work for a whole interval", func() bool { return agent.Last().At.After(shrunk) })
	busy := n.measure(t, onlineGroup, offlineGroup)
	t.Logf("online busy: online %.2f cores, offline %.2f cores under a ceiling of %.2f; the agent saw %+v", busy.online, busy.offline, busy.quota, agent.Last())
	if busy.online < 0.2 {
		t.Errorf("online used %.2f cores of the one it asks for beside capped offline work", busy.online)
	}
	// What online leaves below the threshold, not above the floor: online
	// use moves between the agent's ticks and this window, the more so on a
	// busy machine.
	if leaves := max(threshold-busy.online, floor); busy.quota > leaves+0.3 || busy.quota < leaves-0.6 {
		t.Errorf("ceiling %.2f cores while online used %.2f: want about %.2f (threshold %.2f less online, floor %.2f)",
			busy.quota, busy.online, leaves, threshold, floor)
	}
	if busy.quota < floor-0.001 {
		t.Errorf("ceiling %.2f cores, below the floor of %.2f", busy.quota, floor)
	}
	if busy.offline > busy.highest+0.15 {
		t.Errorf("offline used %.2f cores under a ceiling of at most %.2f cores", busy.offline, busy.highest)
	}
	throttledMore := n.throttled(t, offlineGroup) - throttledStart
	counted := testutil.ToFloat64(agent.metrics.throttled)
	t.Logf("offline throttled %v (cpu.stat), %.2f s (backfill_node_agent_offline_cpu_throttled_seconds_total); online waited for a CPU %.3f s",
		throttledMore, counted, testutil.ToFloat64(agent.metrics.onlineWait.WithLabelValues(online.Namespace, online.Name)))
	// Its two threads want two cores, but only on a quiet machine do they
	// get more than the ceiling: the machine's other work may hold them
	// below it, and then nothing throttles them.
	capped := idle.offline >= idle.quota-0.1 || busy.offline >= busy.quota-0.1
	switch {
	case capped && (throttledMore <= 0 || counted <= 0):
		t.Errorf("offline throttled %v by cpu.stat, %.2f s by the metric: want both to grow, offline ran into its ceiling", throttledMore, counted)
	case !capped:
		t.Logf("the machine's other work kept offline below its ceiling (%.2f of %.2f cores, then %.2f of %.2f): no throttling to check",
			idle.offline, idle.quota, busy.offline, busy.quota)
	}

	// A clean exit lifts the ceiling: the kubelet's own value, none.
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, group := range []string{offlineGroup, offlineContainer} {
		if q := n.quotaRaw(t, group); q != -1 {
			t.Errorf("after Run returned, the CPU quota of %s is %d µs, want -1 (the kubelet's, lifted)", group, q)
		}
	}
	after := n.snapshot(t, untouched)
	for file, b := range before {
		if a := after[file]; a != b {
			t.Errorf("%s was written: before %q at %v, after %q at %v", file, b.content, b.modified, a.content, a.modified)
		}
	}
}

// staticPods is a node whose pods never change.
type staticPods []Pod

func (s staticPods) Pods(context.Context) ([]Pod, error) { return s, nil }

// realNode is this machine's cgroups, with a kubelet's top cgroup of the
// test's own below Parent.
type realNode struct {
	fs *nodefs.FS
	// hierarchies are the mounts the agent reads: one under v2; cpu,
	// cpuacct and memory under v1, once each when mounted together.
	hierarchies []string
}

// newRealNode makes the test's own subtree, backfill-agent-test-<pid>, in
// each hierarchy, removed when the test ends. It skips the test where it
// cannot run: not root, or no writable cgroup hierarchy with the cpu
// controller.
func newRealNode(t *testing.T) *realNode {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: it makes cgroups and moves processes into them")
	}
	const root = "/sys/fs/cgroup"
	n := &realNode{fs: &nodefs.FS{Root: root, Driver: nodefs.Cgroupfs, Parent: fmt.Sprintf("backfill-agent-test-%d", os.Getpid()), ProcRoot: "/proc"}}
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		n.fs.Version = nodefs.V2
		enabled, err := os.ReadFile(filepath.Join(root, "cgroup.subtree_control"))
		if err != nil || !slices.Contains(strings.Fields(string(enabled)), "cpu") {
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

// dir is group's directory, "" the kubelet's top, in hierarchy h.
func (n *realNode) dir(h, group string) string {
	return filepath.Join(h, n.fs.Parent, "kubepods", group)
}

// cpuDir is group's directory in the cpu hierarchy.
func (n *realNode) cpuDir(group string) string { return n.dir(n.hierarchies[0], group) }

// weights are the kubelet's CPU files of a cgroup: its weight in v1
// shares, and its quota (µs per 100 ms, -1 none).
func (n *realNode) weights(shares, quota int64) map[string]string {
	if n.fs.Version == nodefs.V2 {
		limit := "max"
		if quota >= 0 {
			limit = strconv.FormatInt(quota, 10)
		}
		// The kubelet's conversion of shares to a weight.
		return map[string]string{"cpu.weight": strconv.FormatInt(1+((shares-2)*9999)/262142, 10), "cpu.max": limit + " 100000"}
	}
	return map[string]string{"cpu.shares": strconv.FormatInt(shares, 10), "cpu.cfs_quota_us": strconv.FormatInt(quota, 10)}
}

// makeGroup makes group in every hierarchy, removed when the test ends, and
// writes the kubelet's files into its cpu directory. Parents first.
func (n *realNode) makeGroup(t *testing.T, group string, files map[string]string) {
	t.Helper()
	for _, h := range n.hierarchies {
		dir := n.dir(h, group)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeCgroup(t, dir) })
		if !isContainer(group) {
			// Containers are the leaves that hold processes; v2 allows
			// controllers below every other level.
			n.enableControllers(t, dir)
		}
	}
	for _, name := range []string{"cpu.shares", "cpu.weight", "cpu.cfs_quota_us", "cpu.max"} {
		if value, ok := files[name]; ok {
			if err := writeFile(filepath.Join(n.cpuDir(group), name), value); err != nil {
				t.Fatalf("write the kubelet's %s of %q: %v", name, group, err)
			}
		}
	}
}

// isContainer says whether group is a container's cgroup, the level below
// a pod's.
func isContainer(group string) bool {
	return strings.HasPrefix(path.Base(path.Dir(group)), "pod")
}

// enableControllers lets cgroup v2 children of dir use cpu (and memory).
func (n *realNode) enableControllers(t *testing.T, dir string) {
	t.Helper()
	if n.fs.Version != nodefs.V2 {
		return
	}
	controllers := "+cpu"
	if enabled, err := os.ReadFile(filepath.Join(n.fs.Root, "cgroup.subtree_control")); err == nil && slices.Contains(strings.Fields(string(enabled)), "memory") {
		controllers += " +memory"
	}
	if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), controllers); err != nil {
		t.Fatalf("enable %s below %s: %v", controllers, dir, err)
	}
}

// scopeProc gives the agent a /proc whose node is the test's pods alone:
// a stat of realCPUs CPUs, busy with what kubepods used and idle otherwise,
// rewritten every 10 ms until the test ends, and the real /proc entries of
// the threads in containers (cgroup v1 reads their run-queue waits there).
func (n *realNode) scopeProc(t *testing.T, containers ...string) {
	t.Helper()
	dir := t.TempDir()
	start := time.Now()
	update := func() error {
		used, err := n.fs.CPUUsage("")
		if err != nil {
			return err
		}
		const tick = time.Second / 100 // USER_HZ
		busy := int64(used / tick)
		idle := max(int64(time.Since(start)/tick)*realCPUs-busy, 0)
		stat := fmt.Sprintf("cpu  %d 0 0 %d 0 0 0 0 0 0\n", busy, idle)
		for i := range realCPUs {
			stat += fmt.Sprintf("cpu%d 0 0 0 0 0 0 0 0 0 0\n", i)
		}
		// Renamed into place: the agent never reads half a file.
		if err := os.WriteFile(filepath.Join(dir, ".stat"), []byte(stat), 0o644); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(dir, ".stat"), filepath.Join(dir, "stat")); err != nil {
			return err
		}
		for _, c := range containers {
			tasks, err := os.ReadFile(filepath.Join(n.cpuDir(c), "tasks"))
			if errors.Is(err, os.ErrNotExist) {
				continue // cgroup v2 reads cpu.pressure instead
			}
			if err != nil {
				return err
			}
			for _, tid := range strings.Fields(string(tasks)) {
				if err := os.Symlink(filepath.Join("/proc", tid), filepath.Join(dir, tid)); err != nil && !errors.Is(err, os.ErrExist) {
					return err
				}
			}
		}
		return nil
	}
	if err := update(); err != nil {
		t.Fatalf("write the test node's /proc: %v", err)
	}
	n.fs.ProcRoot = dir
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		ticker := time.NewTicker(10 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ticker.C:
				if err := update(); err != nil {
					t.Errorf("write the test node's /proc: %v", err)
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-stopped
	})
}

// moveInto moves process pid into group in every hierarchy.
func (n *realNode) moveInto(t *testing.T, group string, pid int) {
	t.Helper()
	for _, h := range n.hierarchies {
		if err := writeFile(filepath.Join(n.dir(h, group), "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			t.Fatalf("move process %d into %s: %v", pid, n.dir(h, group), err)
		}
	}
}

// fileState is a cgroup file's content and when it was last written
// (cgroupfs updates it on every write, even of the same value).
type fileState struct {
	content  string
	modified time.Time
}

// snapshot is the state of the CPU files of groups.
func (n *realNode) snapshot(t *testing.T, groups []string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	for _, group := range groups {
		for _, name := range []string{"cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.weight", "cpu.max"} {
			file := filepath.Join(n.cpuDir(group), name)
			info, err := os.Stat(file)
			if errors.Is(err, os.ErrNotExist) {
				continue // the other cgroup version's
			}
			if err != nil {
				t.Fatal(err)
			}
			content, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			out[file] = fileState{content: strings.TrimSpace(string(content)), modified: info.ModTime()}
		}
	}
	return out
}

// quotaRaw is group's CPU quota in µs per period, -1 none.
func (n *realNode) quotaRaw(t *testing.T, group string) int64 {
	t.Helper()
	q, err := n.fs.CPUQuota(group)
	if err != nil {
		t.Fatal(err)
	}
	return q.Quota
}

// quota is group's CPU quota in cores, -1 none.
func (n *realNode) quota(t *testing.T, group string) float64 {
	t.Helper()
	q, err := n.fs.CPUQuota(group)
	if err != nil {
		t.Fatal(err)
	}
	if q.Quota < 0 {
		return -1
	}
	return float64(q.Quota) / float64(q.Period)
}

func (n *realNode) throttled(t *testing.T, group string) time.Duration {
	t.Helper()
	d, err := n.fs.CPUThrottled(group)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// window is what online and offline used over a second, in cores, the
// offline ceiling at its end and the highest it was during it.
type window struct {
	online, offline, quota, highest float64
}

func (n *realNode) measure(t *testing.T, onlineGroup, offlineGroup string) window {
	t.Helper()
	var w window
	start := time.Now()
	onlineBefore, offlineBefore := n.usage(t, onlineGroup), n.usage(t, offlineGroup)
	waitReal(t, 5*time.Second, "a second to pass", func() bool {
		w.highest = max(w.highest, n.quota(t, offlineGroup))
		return time.Since(start) >= time.Second
	})
	elapsed := time.Since(start).Seconds()
	w.online = (n.usage(t, onlineGroup) - onlineBefore).Seconds() / elapsed
	w.offline = (n.usage(t, offlineGroup) - offlineBefore).Seconds() / elapsed
	w.quota = n.quota(t, offlineGroup)
	return w
}

func (n *realNode) usage(t *testing.T, group string) time.Duration {
	t.Helper()
	d, err := n.fs.CPUUsage(group)
	if err != nil {
		t.Fatal(err)
	}
	return d
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

// writeFile writes a cgroup file as the kubelet does: no create, no append.
func writeFile(file, value string) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	return errors.Join(err, f.Close())
}

// waitReal polls cond until it holds, failing the test after timeout.
func waitReal(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	ticker := time.NewTicker(20 * time.Millisecond)
	defer ticker.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		<-ticker.C
	}
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

func abs(x float64) float64 { return max(x, -x) }
