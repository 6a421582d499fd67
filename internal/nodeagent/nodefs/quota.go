package nodefs

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Quota is a cgroup's CFS bandwidth limit in µs: it may run Quota per Period; Quota -1 is none.
type Quota struct{ Quota, Period int64 }

// minQuota is the smallest quota the kernel accepts (1 ms); it answers EINVAL below.
const minQuota = 1000

// CPUQuota is group's CPU quota: v1 cpu.cfs_quota_us and cpu.cfs_period_us; v2 cpu.max ("max 100000" is Quota -1).
func (f *FS) CPUQuota(group string) (Quota, error) {
	return f.quotaAt(f.path(cpuCtl, group))
}

func (f *FS) quotaAt(dir string) (Quota, error) {
	if f.Version == V2 {
		path := filepath.Join(dir, "cpu.max")
		s, err := readString(path)
		if err != nil {
			return Quota{}, err
		}
		fields := strings.Fields(s)
		if len(fields) != 2 {
			return Quota{}, fmt.Errorf("read %s: %q is not \"<quota|max> <period>\"", path, s)
		}
		period, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return Quota{}, fmt.Errorf("read %s: period: %w", path, err)
		}
		if fields[0] == "max" {
			return Quota{Quota: -1, Period: period}, nil
		}
		quota, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return Quota{}, fmt.Errorf("read %s: quota: %w", path, err)
		}
		return Quota{Quota: quota, Period: period}, nil
	}
	quota, err := readInt(filepath.Join(dir, "cpu.cfs_quota_us"))
	if err != nil {
		return Quota{}, err
	}
	period, err := readInt(filepath.Join(dir, "cpu.cfs_period_us"))
	if err != nil {
		return Quota{}, err
	}
	return Quota{Quota: quota, Period: period}, nil
}

// setQuotaAt writes the quota of the cgroup at dir, keeping its period.
func (f *FS) setQuotaAt(dir string, q Quota) error {
	if f.Version == V2 {
		value := "max"
		if q.Quota >= 0 {
			value = strconv.FormatInt(q.Quota, 10)
		}
		return f.writeFile(filepath.Join(dir, "cpu.max"), value+" "+strconv.FormatInt(q.Period, 10))
	}
	return f.writeFile(filepath.Join(dir, "cpu.cfs_quota_us"), strconv.FormatInt(q.Quota, 10))
}

// capQuota is the lower of two quotas where a negative one is none (-1).
func capQuota(a, b int64) int64 {
	switch {
	case a < 0 && b < 0:
		return -1
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

// below says whether quota a is lower than b, where -1 (none) is above every number.
func below(a, b int64) bool {
	return a >= 0 && (b < 0 || a < b)
}
