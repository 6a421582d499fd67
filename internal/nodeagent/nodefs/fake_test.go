package nodefs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// newFakeNode makes a cgroup tree and a /proc in t.TempDir(), laid out as the kernel lays out cgroup v version, with
// the kubelet's top cgroup of driver d made. Files hold zeros until a test writes them.
func newFakeNode(t *testing.T, v Version, d Driver) *FS {
	t.Helper()
	dir := t.TempDir()
	f := &FS{Root: filepath.Join(dir, "cgroup"), Version: v, Driver: d, ProcRoot: filepath.Join(dir, "proc")}
	if v == V2 {
		writeFakeFile(t, filepath.Join(f.Root, "cgroup.controllers"), "cpuset cpu io memory pids")
	} else {
		for _, controller := range []string{cpuCtl, cpuacctCtl, memoryCtl} {
			mkdir(t, filepath.Join(f.Root, controller))
		}
	}
	writeFakeFile(t, filepath.Join(f.ProcRoot, "stat"), "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\n")
	addGroup(t, f, "", -1)
	return f
}

// addGroup makes group in every hierarchy with the files the kernel shows there, and the CPU quota given (µs, -1 none).
func addGroup(t *testing.T, f *FS, group string, quota int64) {
	t.Helper()
	if f.Version == V2 {
		dir := f.path(cpuCtl, group)
		files := map[string]string{
			"cpu.max":      v2Max(quota),
			"cpu.stat":     "usage_usec 0\nuser_usec 0\nsystem_usec 0\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n",
			"cpu.pressure": "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
			"cgroup.procs": "", "memory.current": "0", "memory.stat": "anon 0\nfile 0\ninactive_file 0\n",
		}
		for name, content := range files {
			writeFakeFile(t, filepath.Join(dir, name), content)
		}
		return
	}
	cpu := f.path(cpuCtl, group)
	writeFakeFile(t, filepath.Join(cpu, "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10))
	writeFakeFile(t, filepath.Join(cpu, "cpu.cfs_period_us"), "100000")
	writeFakeFile(t, filepath.Join(cpu, "cpu.stat"), "nr_periods 0\nnr_throttled 0\nthrottled_time 0\nnr_bursts 0\nburst_time 0\n")
	writeFakeFile(t, filepath.Join(cpu, "tasks"), "")
	writeFakeFile(t, filepath.Join(f.path(cpuacctCtl, group), "cpuacct.usage"), "0")
	memory := f.path(memoryCtl, group)
	writeFakeFile(t, filepath.Join(memory, "memory.usage_in_bytes"), "0")
	writeFakeFile(t, filepath.Join(memory, "memory.stat"), "cache 0\nrss 0\ninactive_file 0\ntotal_inactive_file 0\n")
}

func v2Max(quota int64) string {
	if quota < 0 {
		return "max 100000"
	}
	return fmt.Sprintf("%d 100000", quota)
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFakeFile(t *testing.T, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// quotaWritten is one write SetPodCPUCeiling made, as a test records it.
type quotaWritten struct{ path, value string }

// recordWrites makes f log every write it makes, in order, and still write the fake tree.
func recordWrites(f *FS) *[]quotaWritten {
	var log []quotaWritten
	f.write = func(path, value string) error {
		log = append(log, quotaWritten{path, value})
		return writeCgroupFile(path, value)
	}
	return &log
}

// v1Violation replays writes, starting from the quotas of before (cgroup directory -> µs, -1 none), and describes the
// first step after which a cgroup's quota exceeds that of its nearest ancestor with one: the state a cgroup v1 kernel
// refuses with EINVAL. A fake tree cannot refuse, so this is how the tests see the order is safe. "" is no violation.
func v1Violation(before map[string]int64, writes []quotaWritten) string {
	state := make(map[string]int64, len(before))
	for dir, q := range before {
		state[dir] = q
	}
	for i, w := range writes {
		dir := filepath.Dir(w.path)
		if _, ok := state[dir]; !ok {
			return fmt.Sprintf("write %d goes to %s, not one of the pod's cgroups", i, w.path)
		}
		quota, err := parseWrittenQuota(w.value)
		if err != nil {
			return fmt.Sprintf("write %d to %s: %v", i, w.path, err)
		}
		state[dir] = quota
		for child, q := range state {
			if q < 0 {
				continue
			}
			if ancestor, limit := nearestQuota(state, child); q > limit && limit >= 0 {
				return fmt.Sprintf("after write %d (%s = %q), %s has %d above %s's %d", i, w.path, w.value, child, q, ancestor, limit)
			}
		}
	}
	return ""
}

// nearestQuota is the closest ancestor of dir that has a quota, which is what bounds dir on v1 (-1: none).
func nearestQuota(state map[string]int64, dir string) (string, int64) {
	for parent := filepath.Dir(dir); parent != dir; dir, parent = parent, filepath.Dir(parent) {
		if q, ok := state[parent]; ok && q >= 0 {
			return parent, q
		}
	}
	return "", -1
}

// parseWrittenQuota reads a value written to cpu.cfs_quota_us ("-1", "50000") or cpu.max ("max 100000").
func parseWrittenQuota(value string) (int64, error) {
	first, _, _ := strings.Cut(value, " ")
	if first == "max" {
		return -1, nil
	}
	return strconv.ParseInt(first, 10, 64)
}
