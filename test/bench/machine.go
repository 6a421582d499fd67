package main

import (
	"bufio"
	"debug/buildinfo"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// machine describes where the benchmark ran.
type machine struct {
	cpus             int
	cpuModel         string
	memory           int64 // bytes
	goVersion        string
	backfillGo       string
	apiserverVersion string
	loadStart        string
	loadEnd          string
}

func describeMachine(backfill string) machine {
	m := machine{cpus: runtime.NumCPU(), goVersion: runtime.Version(), backfillGo: "unknown", loadStart: loadAverage()}
	if info, err := buildinfo.ReadFile(backfill); err == nil {
		m.backfillGo = info.GoVersion
	}
	m.cpuModel = procField("/proc/cpuinfo", "model name")
	if kb, err := strconv.ParseInt(strings.TrimSuffix(procField("/proc/meminfo", "MemTotal"), " kB"), 10, 64); err == nil {
		m.memory = kb << 10
	}
	return m
}

// procField is the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// loadAverage is the 1, 5 and 15 minute load average.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	fields := strings.Fields(string(data))
	if len(fields) < 3 {
		return "unknown"
	}
	return strings.Join(fields[:3], " ")
}

// machineCPU is the CPU time, in seconds, every CPU of the machine has
// spent busy since boot (all but idle and iowait in /proc/stat).
func machineCPU() float64 {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 8 || fields[0] != "cpu" {
		return 0
	}
	busy := 0.0
	for i, f := range fields[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i >= 8 { // guest time is already in user time
			break
		}
		v, _ := strconv.ParseFloat(f, 64)
		busy += v
	}
	return busy / userHZ
}

// selfCPU is the harness's own CPU time in seconds.
func selfCPU() float64 {
	s, err := readStat("/proc/self/stat")
	if err != nil {
		return 0
	}
	return s.cpuSeconds
}
