package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// hierarchies are the cgroup filesystems the bench lays its pods out in.
// On cgroup v1 cpu, cpuacct, memory and cpuset are separate mounts (or cpu
// and cpuacct one combined mount), and a v2 hierarchy beside them (hybrid
// mode, /sys/fs/cgroup/unified) gives each cgroup its CPU pressure; on v2
// they are all the one unified tree.
type hierarchies struct {
	root    string // where the cgroup filesystems are mounted
	v2      bool
	cpu     string // cpu.shares / cpu.weight live here
	cpuacct string // cpuacct.usage / cpu.stat usage_usec live here
	memory  string
	// cpuset confines pods to cores ("" where the bench may not: v2
	// without the cpuset controller enabled at the root).
	cpuset string
	// psi holds cpu.pressure per cgroup ("" where no v2 hierarchy is
	// mounted).
	psi string
}

// dirs are the distinct hierarchy roots, each to hold a subtree of the
// bench's own.
func (h hierarchies) dirs() []string {
	var out []string
	for _, d := range []string{h.cpu, h.cpuacct, h.memory, h.cpuset, h.psi} {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func (h hierarchies) String() string {
	if h.v2 {
		return "cgroup v2 at " + h.root
	}
	s := fmt.Sprintf("cgroup v1 (cpu %s, cpuacct %s, memory %s, cpuset %s)", h.cpu, h.cpuacct, h.memory, h.cpuset)
	if h.psi != "" {
		s += ", CPU pressure from the v2 hierarchy at " + h.psi
	}
	return s
}

// preflight checks that the bench can do what it must: run as root and
// make cgroups with the cpu controller (v1: cpu, cpuacct and memory; v2:
// cpu and memory enabled at the root). Every error says what is missing.
func preflight(root string) (hierarchies, error) {
	if os.Geteuid() != 0 {
		return hierarchies{}, errors.New("must run as root: it makes cgroups and moves its own workloads into them (sudo make bench-interference)")
	}
	h, err := findHierarchies(root)
	if err != nil {
		return hierarchies{}, err
	}
	for _, d := range h.dirs() {
		if err := probeWritable(d); err != nil {
			return hierarchies{}, err
		}
	}
	return h, nil
}

func findHierarchies(root string) (hierarchies, error) {
	if controllers, err := os.ReadFile(filepath.Join(root, "cgroup.controllers")); err == nil {
		return v2Hierarchies(root, string(controllers))
	}
	h := hierarchies{root: root}
	var missing []string
	for _, c := range []struct {
		dst   *string
		names []string
	}{
		{&h.cpu, []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"}},
		{&h.cpuacct, []string{"cpuacct", "cpu,cpuacct", "cpuacct,cpu"}},
		{&h.memory, []string{"memory"}},
	} {
		dir, ok := firstMounted(root, c.names)
		if !ok {
			missing = append(missing, c.names[0])
			continue
		}
		*c.dst = dir
	}
	if len(missing) > 0 {
		return hierarchies{}, fmt.Errorf("no cgroup v2 (%s/cgroup.controllers) and no cgroup v1 %s hierarchy under %s: mount them (or pass -cgroup-root)",
			root, strings.Join(missing, ", "), root)
	}
	h.cpuset, _ = firstMounted(root, []string{"cpuset"})
	if _, err := os.Stat(filepath.Join(root, "unified", "cgroup.controllers")); err == nil {
		h.psi = filepath.Join(root, "unified")
	}
	return h, nil
}

// firstMounted resolves the first of names that is a v1 hierarchy under
// root, symlinks included (cpu -> cpu,cpuacct), so that a combined mount
// counts once.
func firstMounted(root string, names []string) (string, bool) {
	for _, n := range names {
		dir, err := filepath.EvalSymlinks(filepath.Join(root, n))
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err == nil {
			return dir, true
		}
	}
	return "", false
}

// v2Hierarchies needs cpu and memory enabled for the root's children: the
// bench does not change what the whole machine has enabled.
func v2Hierarchies(root, controllers string) (hierarchies, error) {
	enabled, err := os.ReadFile(filepath.Join(root, "cgroup.subtree_control"))
	if err != nil {
		return hierarchies{}, fmt.Errorf("cgroup v2 at %s: %w", root, err)
	}
	for _, c := range []string{"cpu", "memory"} {
		if !slices.Contains(strings.Fields(controllers), c) {
			return hierarchies{}, fmt.Errorf("cgroup v2 at %s has no %s controller (cgroup.controllers: %q): the kernel or a v1 mount holds it", root, c, strings.TrimSpace(controllers))
		}
		if !slices.Contains(strings.Fields(string(enabled)), c) {
			return hierarchies{}, fmt.Errorf("cgroup v2 at %s: the %s controller is not enabled for its children; enable it (echo +%s > %s/cgroup.subtree_control) as the kubelet's node would have it", root, c, c, root)
		}
	}
	h := hierarchies{root: root, v2: true, cpu: root, cpuacct: root, memory: root, psi: root}
	if slices.Contains(strings.Fields(string(enabled)), "cpuset") {
		h.cpuset = root
	}
	return h, nil
}

// probeWritable makes and removes an empty cgroup: a read-only mount (a
// container without the host's cgroups) fails here, before any workload
// starts.
func probeWritable(dir string) error {
	probe := filepath.Join(dir, fmt.Sprintf("backfill-bench-probe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil {
		return fmt.Errorf("cannot make a cgroup under %s (%w): the bench needs the cgroup filesystem writable (run as root on the host, or mount the host's /sys/fs/cgroup read-write)", dir, err)
	}
	if err := os.Remove(probe); err != nil {
		return fmt.Errorf("removing the probe cgroup %s: %w", probe, err)
	}
	return nil
}
