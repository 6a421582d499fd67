package nodefs

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNode(t *testing.T) {
	f := &FS{ProcRoot: t.TempDir()}
	// user nice system idle iowait irq softirq steal guest guest_nice: busy = 100+2+30+4+5+6 = 147 ticks.
	writeFakeFile(t, filepath.Join(f.ProcRoot, "stat"), `cpu  100 2 30 1000 50 4 5 6 70 8
cpu0 50 1 15 500 25 2 2 3 35 4
cpu1 50 1 15 500 25 2 3 3 35 4
intr 12345 0 0
ctxt 999
cpufreq 1
`)
	writeFakeFile(t, filepath.Join(f.ProcRoot, "meminfo"), `MemTotal:       16384000 kB
MemFree:         1000000 kB
MemAvailable:   12288000 kB
Buffers:          100000 kB
`)
	busy, err := f.NodeCPUBusy()
	if err != nil || busy != 1470*time.Millisecond {
		t.Errorf("NodeCPUBusy = %v, %v; want 1.47s", busy, err)
	}
	cpus, err := f.NodeCPUs()
	if err != nil || cpus != 2 {
		t.Errorf("NodeCPUs = %d, %v; want 2", cpus, err)
	}
	total, used, err := f.NodeMemory()
	if err != nil || total != 16384000*1024 || used != 4096000*1024 {
		t.Errorf("NodeMemory = %d, %d, %v; want %d, %d", total, used, err, 16384000*1024, 4096000*1024)
	}
}

func TestNodeErrors(t *testing.T) {
	f := &FS{ProcRoot: t.TempDir()}
	if _, err := f.NodeCPUBusy(); err == nil || !strings.Contains(err.Error(), "stat") {
		t.Errorf("no /proc/stat: got %v", err)
	}
	writeFakeFile(t, filepath.Join(f.ProcRoot, "meminfo"), "MemTotal: 1 kB\n")
	if _, _, err := f.NodeMemory(); err == nil || !strings.Contains(err.Error(), "MemAvailable") {
		t.Errorf("no MemAvailable: got %v", err)
	}
}
