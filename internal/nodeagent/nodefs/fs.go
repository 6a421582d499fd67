// Package nodefs is what the node agent reads and writes of its node: the kubelet's pod cgroups (cgroup v1 or v2,
// systemd or cgroupfs driver) and the node's /proc.
package nodefs

import (
	"os"
	"path/filepath"
)

// Version is the cgroup hierarchy a node runs.
type Version int

const (
	// V1 is the legacy hierarchy: one mount per controller (cpu, cpuacct, memory), or combined ones ("cpu,cpuacct").
	V1 Version = 1
	// V2 is the unified hierarchy: one mount that holds every controller.
	V2 Version = 2
)

// Driver is the kubelet's cgroup driver, which decides how pod cgroups are named.
type Driver string

const (
	// Systemd names cgroups as systemd slices: kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod<uid>.slice.
	Systemd Driver = "systemd"
	// Cgroupfs names cgroups as plain directories: kubepods/besteffort/pod<uid>.
	Cgroupfs Driver = "cgroupfs"
)

// FS is the kubelet's cgroups on one node, and the node's /proc.
type FS struct {
	// Root is where cgroup filesystems are mounted: "/sys/fs/cgroup" (v1: Root/cpu, Root/cpuacct, Root/memory, or
	// combined mounts such as Root/cpu,cpuacct; v2: Root itself).
	Root    string
	Version Version
	Driver  Driver
	// Parent is the kubelet's --cgroup-root below each hierarchy, "" for "/"; the bench uses "backfill-bench-<pid>".
	Parent string
	// ProcRoot is the node's /proc: "/proc".
	ProcRoot string
	// Unified is, on a v1 node, where a unified (v2) hierarchy without controllers is mounted beside the controllers'
	// (systemd's hybrid layout: Root/unified), "" when none is: its cgroups mirror the kubelet's, and their
	// cpu.pressure is the CPU wait the agent reads (WaitMeter).
	Unified string

	// write replaces writeCgroupFile in tests, which cannot make a fake tree refuse a write the way a kernel does.
	write func(path, value string) error
}

// Controller names of cgroup v1; under v2 every controller lives in the one hierarchy.
const (
	cpuCtl     = "cpu"
	cpuacctCtl = "cpuacct"
	memoryCtl  = "memory"
)

// v1Mounts are the directory names a v1 controller may be mounted at, in the order tried: distributions mount cpu and
// cpuacct together and often add the single names as symlinks.
var v1Mounts = map[string][]string{
	cpuCtl:     {"cpu", "cpu,cpuacct", "cpuacct,cpu"},
	cpuacctCtl: {"cpuacct", "cpu,cpuacct", "cpuacct,cpu"},
	memoryCtl:  {"memory"},
}

// mount is the directory where controller's hierarchy is mounted. When none is found it returns the usual name, so
// that errors name the path a reader expected.
func (f *FS) mount(controller string) string {
	if f.Version == V2 {
		return f.Root
	}
	for _, name := range v1Mounts[controller] {
		if dir := filepath.Join(f.Root, name); isDir(dir) {
			return dir
		}
	}
	return filepath.Join(f.Root, controller)
}

// top is the kubelet's top cgroup below Parent.
func (f *FS) top() string {
	if f.Driver == Systemd {
		return "kubepods.slice"
	}
	return "kubepods"
}

// path is group's directory in controller's hierarchy.
func (f *FS) path(controller, group string) string {
	return filepath.Join(f.mount(controller), f.Parent, f.top(), group)
}

// Exists says whether group exists in the cpu hierarchy.
func (f *FS) Exists(group string) bool {
	return isDir(f.path(cpuCtl, group))
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}
