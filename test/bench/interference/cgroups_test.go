package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// On a plain directory standing in for the cpu hierarchy, the layout is
// the kubelet's cgroupfs layout with its CPU weights (the online pod
// requests 80% of the node), and remove leaves
// nothing behind.
func TestLayoutIsTheKubeletsAndRemovesItself(t *testing.T) {
	root := t.TempDir()
	h := hierarchies{root: root, cpu: filepath.Join(root, "cpu"), cpuacct: filepath.Join(root, "cpuacct"), memory: filepath.Join(root, "memory")}
	// No cpuset here: a plain directory has no parent cpuset.cpus to copy.
	for _, d := range h.dirs() {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l, err := newLayout(h, 42, 2)
	if err != nil {
		t.Fatal(err)
	}
	shares := func(group string) string {
		b, err := os.ReadFile(filepath.Join(h.cpu, "backfill-bench-42", group, "cpu.shares"))
		if err != nil {
			return err.Error()
		}
		return strings.TrimSpace(string(b))
	}
	got := map[string]string{
		"kubepods":         shares("kubepods"),
		"burstable":        shares("kubepods/burstable"),
		"besteffort":       shares("kubepods/besteffort"),
		"online pod":       shares(l.online.group()),
		"online container": shares(l.online.container()),
		"offline pod":      shares(l.offline.group()),
	}
	want := map[string]string{
		"kubepods":         "2048",
		"burstable":        "1638",
		"besteffort":       "2",
		"online pod":       "1638",
		"online container": "1638",
		"offline pod":      "2",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cpu.shares (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(l.offline.container(), "kubepods/besteffort/pod"+l.offline.uid+"/") {
		t.Errorf("offline container cgroup %s: want kubepods/besteffort/pod<uid>/<id>", l.offline.container())
	}
	if _, err := os.Stat(filepath.Join(h.memory, "backfill-bench-42", l.online.container())); err != nil {
		t.Errorf("the memory hierarchy lacks the online container: %v", err)
	}

	// A real cgroup's files go with it; a plain directory's must go first.
	for _, d := range h.dirs() {
		_ = filepath.Walk(filepath.Join(d, "backfill-bench-42"), func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				return os.Remove(p)
			}
			return nil
		})
	}
	l.remove()
	for _, d := range h.dirs() {
		if _, err := os.Stat(filepath.Join(d, "backfill-bench-42")); !os.IsNotExist(err) {
			t.Errorf("%s/backfill-bench-42 is left: %v", d, err)
		}
	}
}

func TestSharesToWeight(t *testing.T) {
	for shares, want := range map[int64]int64{2: 1, 1024: 39, 2048: 79, 262144: 10000} {
		if got := sharesToWeight(shares); got != want {
			t.Errorf("sharesToWeight(%d) = %d, want %d", shares, got, want)
		}
	}
}
