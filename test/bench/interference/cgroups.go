package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The kubelet's CPU weights (cgroupfs driver): cpu.shares is a pod's CPU
// request in milli-cores × 1024 / 1000, and 2 for BestEffort.
const (
	sharesPerCore   = 1024
	bestEffortShare = 2
	// onlineRequestShare is the share of the node's CPUs the online pod
	// requests: far more than it uses, as online pods do where
	// co-location pays; it has no limit (Burstable).
	onlineRequestShare = 0.8
)

// pod is one pod's cgroup with one container, as the kubelet's cgroupfs
// driver lays it out: kubepods/<qos>/pod<uid>/<container id>.
type pod struct {
	name        string
	qos         string // "burstable" or "besteffort"
	uid         string
	containerID string
	shares      int64
}

// group is the pod's cgroup relative to the bench's own subtree.
func (p *pod) group() string { return filepath.Join("kubepods", p.qos, "pod"+p.uid) }

// container is where the pod's process runs.
func (p *pod) container() string { return filepath.Join(p.group(), p.containerID) }

// loadGroup is where the load generator runs: outside kubepods, as a
// node's monitoring and daemons do.
const loadGroup = "system/loadgen"

// layout is the bench's cgroup subtree, backfill-bench-<pid> under each
// hierarchy: a kubelet's kubepods with an online pod and an offline pod,
// and a system group for the load generator.
type layout struct {
	h    hierarchies
	sub  string
	cpus int
	// online serves requests (Burstable, no limit).
	online *pod
	// offline trains as backfill runs it: BestEffort.
	offline *pod
	made    []string // absolute directories, in the order made
}

func newLayout(h hierarchies, pid, cpus int) (l *layout, err error) {
	onlineShares := int64(onlineRequestShare * float64(cpus) * sharesPerCore)
	l = &layout{
		h:       h,
		sub:     fmt.Sprintf("backfill-bench-%d", pid),
		cpus:    cpus,
		online:  newPod("online", "burstable", onlineShares),
		offline: newPod("offline", "besteffort", bestEffortShare),
	}
	defer func() {
		if err != nil {
			l.remove()
		}
	}()
	// The kubelet gives the Burstable QoS cgroup the sum of its pods'
	// requests.
	steps := []cgroupStep{
		{"", 0, false},
		{"kubepods", int64(cpus) * sharesPerCore, false},
		{"kubepods/burstable", onlineShares, false},
		{"kubepods/besteffort", bestEffortShare, false},
		{"system", 0, false},
		{loadGroup, 0, true},
	}
	for _, p := range []*pod{l.online, l.offline} {
		steps = append(steps, cgroupStep{p.group(), p.shares, false}, cgroupStep{p.container(), p.shares, true})
	}
	for _, s := range steps {
		if err := l.make(s.group, s.shares, s.leaf); err != nil {
			return l, err
		}
	}
	return l, nil
}

// cgroupStep is one cgroup of the layout, made after its parent.
type cgroupStep struct {
	group  string
	shares int64 // 0: the kernel's default
	leaf   bool
}

func newPod(name, qos string, shares int64) *pod {
	return &pod{name: name, qos: qos, uid: newUID(), containerID: randomHex(32), shares: shares}
}

// make creates group in every hierarchy and sets its CPU weight (0: the
// kernel's default).
func (l *layout) make(group string, shares int64, leaf bool) error {
	for _, d := range l.h.dirs() {
		dir := filepath.Join(d, l.sub, group)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("making cgroup %s: %w", dir, err)
		}
		l.made = append(l.made, dir)
		// On v2 a cgroup's children get the cpu and memory files only
		// when it enables them; a cgroup without processes may.
		if l.h.v2 && d == l.h.cpu && !leaf {
			enable := "+cpu +memory"
			if l.h.cpuset != "" {
				enable += " +cpuset"
			}
			if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), enable); err != nil {
				return err
			}
		}
	}
	// A v1 cpuset takes no task until it has CPUs and memory nodes: the
	// parent's.
	if l.h.cpuset != "" && l.h.cpuset != l.h.cpu {
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			parent, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Join(l.h.cpuset, l.sub, group)), f))
			if err != nil {
				return fmt.Errorf("reading the parent's %s: %w", f, err)
			}
			if err := writeFile(filepath.Join(l.h.cpuset, l.sub, group, f), strings.TrimSpace(string(parent))); err != nil {
				return err
			}
		}
	}
	if shares == 0 {
		return nil
	}
	if l.h.v2 {
		return writeFile(filepath.Join(l.h.cpu, l.sub, group, "cpu.weight"), strconv.FormatInt(sharesToWeight(shares), 10))
	}
	return writeFile(filepath.Join(l.h.cpu, l.sub, group, "cpu.shares"), strconv.FormatInt(shares, 10))
}

// sharesToWeight is the kubelet's mapping of v1 cpu.shares [2, 262144] to
// v2 cpu.weight [1, 10000].
func sharesToWeight(shares int64) int64 {
	return 1 + ((shares-2)*9999)/262142
}

// moveInto moves a process the bench started (all its threads) into
// group in every hierarchy.
func (l *layout) moveInto(pid int, group string) error {
	for _, d := range l.h.dirs() {
		if err := writeFile(filepath.Join(d, l.sub, group, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("moving process %d: %w", pid, err)
		}
	}
	return nil
}

// setCPUs confines a pod (its cgroup and its container's) or the load
// generator to cpus ("0", "1-3"; "" for all of the node's). A v1 child's
// CPUs must stay within its parent's: narrowing writes the container
// first, widening the pod first.
func (l *layout) setCPUs(groups []string, cpus string) error {
	if cpus == "" {
		cpus = fmt.Sprintf("0-%d", l.cpus-1)
		for _, g := range groups {
			if err := writeFile(filepath.Join(l.h.cpuset, l.sub, g, "cpuset.cpus"), cpus); err != nil {
				return err
			}
		}
		return nil
	}
	for i := len(groups) - 1; i >= 0; i-- {
		if err := writeFile(filepath.Join(l.h.cpuset, l.sub, groups[i], "cpuset.cpus"), cpus); err != nil {
			return err
		}
	}
	return nil
}

// usage is the CPU time group's processes used since it was made.
func (l *layout) usage(group string) (time.Duration, error) {
	dir := filepath.Join(l.h.cpuacct, l.sub, group)
	if !l.h.v2 {
		b, err := os.ReadFile(filepath.Join(dir, "cpuacct.usage"))
		if err != nil {
			return 0, fmt.Errorf("reading CPU use: %w", err)
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing %s/cpuacct.usage: %w", dir, err)
		}
		return time.Duration(ns), nil
	}
	us, err := readKeyed(filepath.Join(dir, "cpu.stat"), "usage_usec")
	return time.Duration(us) * time.Microsecond, err
}

// pressure is the time at least one of group's tasks waited for a CPU
// (cpu.pressure "some"), where a v2 hierarchy holds the group; ok false
// where none does.
func (l *layout) pressure(group string) (d time.Duration, ok bool, err error) {
	if l.h.psi == "" {
		return 0, false, nil
	}
	b, err := os.ReadFile(filepath.Join(l.h.psi, l.sub, group, "cpu.pressure"))
	if err != nil {
		return 0, false, fmt.Errorf("reading CPU pressure: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "some ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, found := strings.CutPrefix(f, "total="); found {
				us, err := strconv.ParseInt(v, 10, 64)
				return time.Duration(us) * time.Microsecond, err == nil, err
			}
		}
	}
	return 0, false, fmt.Errorf("%s/%s/cpu.pressure has no some total", l.sub, group)
}

// tasks are the thread IDs in group's container cgroup.
func (l *layout) tasks(group string) ([]int, error) {
	file := "tasks"
	if l.h.v2 {
		file = "cgroup.threads"
	}
	b, err := os.ReadFile(filepath.Join(l.h.cpu, l.sub, group, file))
	if err != nil {
		return nil, fmt.Errorf("listing the threads of %s: %w", group, err)
	}
	var tids []int
	for _, f := range strings.Fields(string(b)) {
		if tid, err := strconv.Atoi(f); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// remove removes every cgroup the bench made, deepest first. The
// workloads must have exited: a cgroup with tasks cannot be removed, and
// the kernel lets go of a dead task's cgroup a moment after its parent
// reaped it, hence the short retry.
func (l *layout) remove() {
	var left []string
	for i := len(l.made) - 1; i >= 0; i-- {
		dir := l.made[i]
		deadline := time.Now().Add(3 * time.Second)
		for {
			err := os.Remove(dir)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
				left = append(left, fmt.Sprintf("%s (%v)", dir, err))
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	l.made = nil
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "bench-interference: could not remove cgroups, remove them by hand (rmdir) once empty:\n  %s\n", strings.Join(left, "\n  "))
	}
}

func writeFile(path, value string) error {
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		return fmt.Errorf("writing %q to %s: %w", value, path, err)
	}
	return nil
}

// readKeyed reads key's value from a flat keyed file of "key value" lines.
func readKeyed(path, key string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s has no %s", path, key)
}

// newUID is a random RFC 4122 version 4 UUID, like a pod's UID.
func newUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func randomHex(bytes int) string {
	b := make([]byte, bytes)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
