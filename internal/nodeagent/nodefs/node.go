package nodefs

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/stat's CPU times: USER_HZ, 100 on every Linux architecture the agent runs on.
const userHZ = 100

// NodeCPUBusy is the CPU time the whole node has spent busy since boot, from ProcRoot/stat's "cpu" line: user, nice,
// system, irq and softirq. Steal is left out: it is time the hypervisor gave another guest, which the node's own
// processes did not use and its cgroups do not count, so it is no use of the node's system.
func (f *FS) NodeCPUBusy() (time.Duration, error) {
	path := filepath.Join(f.ProcRoot, "stat")
	s, err := readString(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(s) {
		fields := strings.Fields(line)
		if len(fields) < 6 || fields[0] != "cpu" {
			continue
		}
		// user nice system idle iowait irq softirq steal; guest and guest_nice are already in user and nice.
		var busy int64
		for i, field := range fields[1:min(len(fields), 9)] {
			ticks, err := strconv.ParseInt(field, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("read %s: cpu line: %w", path, err)
			}
			if i != 3 && i != 4 && i != 7 { // idle, iowait, steal
				busy += ticks
			}
		}
		return time.Duration(busy) * (time.Second / userHZ), nil
	}
	return 0, fmt.Errorf("read %s: no \"cpu\" line", path)
}

// NodeCPUs is the number of logical CPUs online: the cpuN lines of ProcRoot/stat.
func (f *FS) NodeCPUs() (int, error) {
	path := filepath.Join(f.ProcRoot, "stat")
	s, err := readString(path)
	if err != nil {
		return 0, err
	}
	n := 0
	for line := range strings.Lines(s) {
		name, _, _ := strings.Cut(line, " ")
		if rest, ok := strings.CutPrefix(name, "cpu"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			n++
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("read %s: no cpuN lines", path)
	}
	return n, nil
}

// NodeMemory is the node's memory in bytes from ProcRoot/meminfo: MemTotal, and used as MemTotal - MemAvailable.
func (f *FS) NodeMemory() (total, used int64, err error) {
	path := filepath.Join(f.ProcRoot, "meminfo")
	s, err := readString(path)
	if err != nil {
		return 0, 0, err
	}
	values := map[string]int64{}
	for line := range strings.Lines(s) {
		fields := strings.Fields(line) // "MemTotal:  16384 kB"
		if len(fields) < 2 {
			continue
		}
		key := strings.TrimSuffix(fields[0], ":")
		if key != "MemTotal" && key != "MemAvailable" {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("read %s: %s: %w", path, key, err)
		}
		values[key] = kb * 1024
	}
	total, okTotal := values["MemTotal"]
	available, okAvailable := values["MemAvailable"]
	if !okTotal || !okAvailable {
		return 0, 0, fmt.Errorf("read %s: no MemTotal or MemAvailable line (MemAvailable needs Linux 3.14 or newer)", path)
	}
	return total, total - available, nil
}
