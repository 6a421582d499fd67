//go:build integration

package nodeagent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// scopeProc makes the agent's --proc-root: a /proc whose node is the test's
// pods alone, so that the machine's other work (a build, other suites) is
// no system use that would hold the agent's ceiling down. Its stat has 2
// CPUs, busy with what kubepods used and idle otherwise, rewritten every
// 10 ms until the test ends; its meminfo is the machine's, and the
// threads of containers are the real /proc entries (cgroup v1 reads their
// run-queue waits there).
func (n *realNode) scopeProc(t *testing.T, containers ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink("/proc/meminfo", filepath.Join(dir, "meminfo")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := n.writeProc(dir, start, containers); err != nil {
		t.Fatalf("write the test node's /proc: %v", err)
	}
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
				if err := n.writeProc(dir, start, containers); err != nil {
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
	return dir
}

// procCPUs is the number of CPUs of the test's node.
const procCPUs = 2

func (n *realNode) writeProc(dir string, start time.Time, containers []string) error {
	used, err := n.fs.CPUUsage("")
	if err != nil {
		return err
	}
	const tick = time.Second / 100 // USER_HZ
	busy := int64(used / tick)
	idle := max(int64(time.Since(start)/tick)*procCPUs-busy, 0)
	stat := fmt.Sprintf("cpu  %d 0 0 %d 0 0 0 0 0 0\n", busy, idle)
	for i := range procCPUs {
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
