package nodefs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Limits are the kubelet's own quotas of a pod, in µs per period (-1 none): the pod's, and its containers' by
// container ID (a child cgroup belongs to a container when its directory name contains the ID: "<id>",
// "cri-containerd-<id>.scope", "crio-<id>.scope", "docker-<id>.scope"). Unknown children (the sandbox) get
// min(Pod, ceiling) if they have a quota.
type Limits struct {
	Pod        int64
	Containers map[string]int64
}

// SetPodCPUCeiling caps a pod cgroup and its children (containers) at ceiling µs per period (-1: no ceiling, i.e.
// restore the kubelet's own values from limits). Each cgroup gets min(its kubelet value, ceiling); a child with no
// quota of its own (-1) and no limit is left alone. Order is safe for v1, where a child's quota may not exceed its
// parent's (EINVAL): first lower the children whose target is below their current value, then write the pod, then
// raise the children. Writes only files whose value differs. A read-only mount gives an error naming the fix.
//
// Periods are left as the kubelet set them (the same on every cgroup of a pod). A ceiling below the kernel's minimum
// of 1000 µs is raised to it.
func (f *FS) SetPodCPUCeiling(group string, ceiling int64, limits Limits) error {
	return f.setPodQuotas(group, ceiling, limits, false)
}

// RestorePodCPUQuota raises each cgroup of a pod (the pod's, its children's) whose CPU quota is below the kubelet's
// own value from limits back to it, and lowers none: what is left of a ceiling on a pod that is no longer capped,
// whoever set it. A cgroup above the kubelet's value is the kubelet's business (a resize it is applying, say).
func (f *FS) RestorePodCPUQuota(group string, limits Limits) error {
	return f.setPodQuotas(group, -1, limits, true)
}

// setPodQuotas is SetPodCPUCeiling; raiseOnly skips every write that would lower a quota.
func (f *FS) setPodQuotas(group string, ceiling int64, limits Limits, raiseOnly bool) error {
	if ceiling >= 0 {
		ceiling = max(ceiling, minQuota)
	}
	podDir := f.path(cpuCtl, group)
	pod, err := f.quotaAt(podDir)
	if err != nil {
		return fmt.Errorf("set CPU ceiling of pod cgroup %s: %w", group, err)
	}
	podTarget := capQuota(limits.Pod, ceiling)
	children, err := f.childQuotas(podDir, ceiling, podTarget, limits)
	if err != nil {
		return fmt.Errorf("set CPU ceiling of pod cgroup %s: %w", group, err)
	}

	steps := make([]quotaWrite, 0, len(children)+1)
	for _, c := range children {
		if below(c.target, c.current.Quota) {
			steps = append(steps, c)
		}
	}
	if pod.Quota != podTarget {
		steps = append(steps, quotaWrite{dir: podDir, current: pod, target: podTarget})
	}
	for _, c := range children {
		if below(c.current.Quota, c.target) {
			steps = append(steps, c)
		}
	}
	for _, s := range steps {
		if raiseOnly && !below(s.current.Quota, s.target) {
			continue
		}
		if err := f.setQuotaAt(s.dir, Quota{Quota: s.target, Period: s.current.Period}); err != nil {
			return fmt.Errorf("set CPU ceiling of pod cgroup %s: %w", group, err)
		}
	}
	return nil
}

// quotaWrite is one cgroup's quota now and the one SetPodCPUCeiling wants.
type quotaWrite struct {
	dir     string
	current Quota
	target  int64
}

// childQuotas reads the pod's child cgroups and works out their targets. A target never exceeds the pod's, even if
// limits say otherwise: the kernel would refuse it on v1, and on v2 the pod's quota binds anyway.
func (f *FS) childQuotas(podDir string, ceiling, podTarget int64, limits Limits) ([]quotaWrite, error) {
	entries, err := os.ReadDir(podDir)
	if err != nil {
		return nil, fileError("list", podDir, err)
	}
	var children []quotaWrite
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(podDir, e.Name())
		current, err := f.quotaAt(dir)
		if err != nil {
			if !isDir(dir) {
				continue // the container went away since the listing
			}
			return nil, err
		}
		kubelet, known := containerLimit(e.Name(), limits.Containers)
		if !known {
			kubelet = limits.Pod
		}
		if current.Quota < 0 && (!known || kubelet < 0) {
			continue // no quota and none to restore: the pod's quota bounds it
		}
		target := capQuota(capQuota(kubelet, ceiling), podTarget)
		children = append(children, quotaWrite{dir: dir, current: current, target: target})
	}
	return children, nil
}

// containerLimit finds the container whose ID the cgroup directory name contains. IDs may carry the runtime's
// "containerd://" prefix as pod status shows them.
func containerLimit(dirName string, containers map[string]int64) (int64, bool) {
	for id, limit := range containers {
		if _, bare, found := strings.Cut(id, "://"); found {
			id = bare
		}
		if id != "" && strings.Contains(dirName, id) {
			return limit, true
		}
	}
	return 0, false
}
