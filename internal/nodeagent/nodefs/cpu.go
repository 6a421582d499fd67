package nodefs

import (
	"path/filepath"
	"time"
)

// CPUUsage is the CPU time group's tasks used since it was made: v1 cpuacct.usage (ns), v2 cpu.stat usage_usec.
func (f *FS) CPUUsage(group string) (time.Duration, error) {
	if f.Version == V2 {
		us, err := readKeyed(filepath.Join(f.path(cpuCtl, group), "cpu.stat"), "usage_usec")
		return time.Duration(us) * time.Microsecond, err
	}
	ns, err := readInt(filepath.Join(f.path(cpuacctCtl, group), "cpuacct.usage"))
	return time.Duration(ns), err
}

// CPUThrottled is how long group was held back by its CPU quota: v1 cpu.stat throttled_time (ns), v2 cpu.stat
// throttled_usec.
func (f *FS) CPUThrottled(group string) (time.Duration, error) {
	stat := filepath.Join(f.path(cpuCtl, group), "cpu.stat")
	if f.Version == V2 {
		us, err := readKeyed(stat, "throttled_usec")
		return time.Duration(us) * time.Microsecond, err
	}
	ns, err := readKeyed(stat, "throttled_time")
	return time.Duration(ns), err
}
