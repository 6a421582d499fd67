package nodeagent

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

// fakeTree is a node of 2 CPUs as files in a temporary directory: a cgroup
// v1 tree of the cgroupfs driver and a /proc whose counters never move, so
// that the node is light. Writes land in plain files: it tests what the
// agent decides to write, not what a kernel accepts.
type fakeTree struct {
	fs *nodefs.FS
}

func newFakeTree(t *testing.T) *fakeTree {
	t.Helper()
	dir := t.TempDir()
	n := &fakeTree{fs: &nodefs.FS{Root: filepath.Join(dir, "cgroup"), Version: nodefs.V1, Driver: nodefs.Cgroupfs,
		ProcRoot: filepath.Join(dir, "proc")}}
	writeTestFile(t, filepath.Join(n.fs.ProcRoot, "stat"), "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0 0 0\n")
	n.addGroup(t, "", -1)
	return n
}

// addGroup makes group with the CPU quota given (µs per 100 ms, -1 none)
// and the normal scheduling class.
func (n *fakeTree) addGroup(t *testing.T, group string, quota int64) {
	t.Helper()
	cpu := filepath.Join(n.fs.Root, "cpu", "kubepods", group)
	writeTestFile(t, filepath.Join(cpu, "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10))
	writeTestFile(t, filepath.Join(cpu, "cpu.cfs_period_us"), "100000")
	writeTestFile(t, filepath.Join(cpu, "cpu.idle"), "0")
	writeTestFile(t, filepath.Join(cpu, "cpu.stat"), "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n")
	writeTestFile(t, filepath.Join(n.fs.Root, "cpuacct", "kubepods", group, "cpuacct.usage"), "0")
}

// addPod makes p's cgroup and its containers', each with the quota given.
func (n *fakeTree) addPod(t *testing.T, p Pod, quota int64) {
	t.Helper()
	n.addGroup(t, p.group(n.fs), quota)
	for id := range p.Limits.Containers {
		n.addGroup(t, filepath.Join(p.group(n.fs), id), quota)
	}
}

// setIdle writes group's cpu.idle, as an agent before this one did.
func (n *fakeTree) setIdle(t *testing.T, group string, idle bool) {
	t.Helper()
	value := "0"
	if idle {
		value = "1"
	}
	writeTestFile(t, filepath.Join(n.fs.Root, "cpu", "kubepods", group, "cpu.idle"), value)
}

// state is a pod cgroup's quota and whether it is idle.
func (n *fakeTree) state(t *testing.T, group string) podState {
	t.Helper()
	q, err := n.fs.CPUQuota(group)
	if err != nil {
		t.Fatal(err)
	}
	idle, err := os.ReadFile(filepath.Join(n.fs.Root, "cpu", "kubepods", group, "cpu.idle"))
	if err != nil {
		t.Fatal(err)
	}
	return podState{Quota: q.Quota, Idle: strings.TrimSpace(string(idle)) == "1"}
}

// podState is what the tests read of a pod cgroup.
type podState struct {
	Quota int64
	Idle  bool
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// podList is a node whose pods a test changes between ticks.
type podList struct {
	mu   sync.Mutex
	pods []Pod
}

func (l *podList) Pods(context.Context) ([]Pod, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Pod(nil), l.pods...), nil
}

func (l *podList) set(pods ...Pod) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pods = pods
}
