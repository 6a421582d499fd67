package nodefs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Detect finds the node's cgroups: v2 if root/cgroup.controllers exists, else v1 if root/cpu (or root/cpu,cpuacct)
// exists, with the unified hierarchy of a hybrid layout if root/unified/cgroup.controllers exists; the driver from
// which of kubepods.slice / kubepods exists under parent in the cpu hierarchy. Its errors say what is missing and how
// to fix it.
func Detect(root, parent, procRoot string) (*FS, error) {
	f := &FS{Root: root, Parent: strings.Trim(parent, "/"), ProcRoot: procRoot}
	if !isDir(root) {
		return nil, fmt.Errorf("cgroup root %s does not exist: mount the host's /sys/fs/cgroup there, or point --cgroup-root at it", root)
	}
	version, err := detectVersion(root)
	if err != nil {
		return nil, err
	}
	f.Version = version
	unified := filepath.Join(root, "unified")
	if version == V1 && isFile(filepath.Join(unified, "cgroup.controllers")) {
		f.Unified = unified
	}
	if f.Driver, err = detectDriver(f); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(procRoot, "stat")); err != nil {
		return nil, fmt.Errorf("node's /proc: %w: mount the host's /proc, or run with hostPID and point --proc-root at /proc", err)
	}
	return f, nil
}

func detectVersion(root string) (Version, error) {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		return V2, nil
	}
	v1 := &FS{Root: root, Version: V1}
	if !isDir(v1.mount(cpuCtl)) {
		return 0, fmt.Errorf("no cgroup filesystem at %s: neither cgroup.controllers (v2) nor a cpu hierarchy (v1) is there; "+
			"mount the host's /sys/fs/cgroup at %s, read-write", root, root)
	}
	// The agent reads usage from cpuacct and memory: a v1 node without them is not one the kubelet runs on.
	for _, controller := range []string{cpuacctCtl, memoryCtl} {
		if dir := v1.mount(controller); !isDir(dir) {
			return 0, fmt.Errorf("cgroup v1 at %s has no %s hierarchy (%s): mount the host's whole /sys/fs/cgroup, not only its cpu hierarchy",
				root, controller, dir)
		}
	}
	return V1, nil
}

func detectDriver(f *FS) (Driver, error) {
	dir := filepath.Join(f.mount(cpuCtl), f.Parent)
	systemd := isDir(filepath.Join(dir, "kubepods.slice"))
	cgroupfs := isDir(filepath.Join(dir, "kubepods"))
	switch {
	case systemd && cgroupfs:
		// Guessing could make the agent cap an empty tree and read no usage at all.
		return "", fmt.Errorf("both kubepods.slice and kubepods exist in %s, so the kubelet's cgroup driver is unclear: "+
			"remove the one the kubelet does not use (it holds no tasks) with rmdir", dir)
	case systemd:
		return Systemd, nil
	case cgroupfs:
		return Cgroupfs, nil
	}
	return "", fmt.Errorf("no kubepods.slice or kubepods cgroup in %s: set --kubelet-cgroup-root to the kubelet's --cgroup-root (now %q)",
		dir, "/"+f.Parent)
}
