package manager

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// The Go garbage collector lets the heap grow to twice what is live
// before it collects (GOGC=100), and does not know the container's memory
// limit: a manager holding 150 MiB can reach 500 MiB of RSS after a busy
// start, and be killed for it. Unless GOMEMLIMIT is set, the manager gives
// the collector a soft limit of memoryLimitShare of its cgroup's memory
// limit, so that it collects harder as it nears the limit instead.
const memoryLimitShare = 0.9

// cgroupMemoryLimits are the files that hold a container's memory limit:
// cgroup v2, then v1.
var cgroupMemoryLimits = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// noCgroupLimit: cgroup v1 reports no limit as a number near 2^63.
const noCgroupLimit = 1 << 62

// applyMemoryLimit sets the collector's soft limit from the cgroup's
// memory limit; it returns the soft limit (0: none set) and why.
func applyMemoryLimit() (int64, string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, "GOMEMLIMIT is set"
	}
	limit, path := cgroupMemoryLimit(os.ReadFile)
	if limit == 0 {
		return 0, "no cgroup memory limit"
	}
	soft := int64(float64(limit) * memoryLimitShare)
	debug.SetMemoryLimit(soft)
	return soft, path
}

// cgroupMemoryLimit is the memory limit of the cgroup the process runs
// in, and the file it was read from; 0 when there is none.
func cgroupMemoryLimit(read func(string) ([]byte, error)) (int64, string) {
	for _, path := range cgroupMemoryLimits {
		data, err := read(path)
		if err != nil {
			continue // not this cgroup version
		}
		v := strings.TrimSpace(string(data))
		if v == "max" {
			return 0, path
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= noCgroupLimit {
			return 0, path
		}
		return n, path
	}
	return 0, ""
}
