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
	// onlineRequest is the online pod's CPU request in milli-cores; it has
	// no limit (Burstable).
	onlineRequest = 1000
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

// layout is the bench's cgroup subtree, backfill-bench-<pid> under each
// hierarchy: a kubelet's kubepods with an online pod and two offline pods.
type layout struct {
	h    hierarchies
	sub  string
	cpus int
	// online serves requests (Burstable, requests 1 core, no limit).
	online *pod
	// offline trains as backfill runs it today: BestEffort.
	offline *pod
	// sameWeight trains as a user would without co-location policy: a
	// Burstable pod requesting what the online pod requests.
	sameWeight *pod
	made       []string // absolute directories, in the order made
}

func newLayout(h hierarchies, pid, cpus int) (l *layout, err error) {
	l = &layout{
		h:          h,
		sub:        fmt.Sprintf("backfill-bench-%d", pid),
		cpus:       cpus,
		online:     newPod("online", "burstable", onlineRequest*sharesPerCore/1000),
		offline:    newPod("offline", "besteffort", bestEffortShare),
		sameWeight: newPod("offline-same-weight", "burstable", onlineRequest*sharesPerCore/1000),
	}
	defer func() {
		if err != nil {
			l.remove()
		}
	}()
	// The kubelet gives the Burstable QoS cgroup the sum of its pods'
	// requests; both Burstable pods exist for the whole run.
	burstable := l.online.shares + l.sameWeight.shares
	steps := []cgroupStep{
		{"", 0, false},
		{"kubepods", int64(cpus) * sharesPerCore, false},
		{"kubepods/burstable", burstable, false},
		{"kubepods/besteffort", bestEffortShare, false},
	}
	for _, p := range []*pod{l.online, l.offline, l.sameWeight} {
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
		if l.h.v2 && !leaf {
			if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+cpu +memory"); err != nil {
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
	b, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return 0, fmt.Errorf("reading CPU use: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			us, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing %s/cpu.stat: %w", dir, err)
			}
			return time.Duration(us) * time.Microsecond, nil
		}
	}
	return 0, fmt.Errorf("%s/cpu.stat has no usage_usec", dir)
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
