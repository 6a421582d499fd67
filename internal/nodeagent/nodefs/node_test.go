package nodefs

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNode(t *testing.T) {
	f := &FS{ProcRoot: t.TempDir()}
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
	cpus, err := f.NodeCPUs()
	if err != nil || cpus != 2 {
		t.Errorf("NodeCPUs = %d, %v; want 2", cpus, err)
	}
	total, used, err := f.NodeMemory()
	if err != nil || total != 16384000*1024 || used != 4096000*1024 {
		t.Errorf("NodeMemory = %d, %d, %v; want %d, %d", total, used, err, 16384000*1024, 4096000*1024)
	}
}

func TestNodeCPUBusy(t *testing.T) {
	// The "cpu" line's fields: user nice system idle iowait irq softirq steal guest guest_nice, in 1/100 s.
	cases := map[string]struct {
		line string
		want time.Duration
	}{
		"bare metal: user, nice, system, irq and softirq": {
			line: "cpu  100 2 30 1000 50 4 5 0 70 8", want: 1410 * time.Millisecond},
		"a VM's steal is no use of the node": {
			line: "cpu  100 2 30 1000 50 4 5 600 70 8", want: 1410 * time.Millisecond},
		"guest time is in user and nice already": {
			line: "cpu  100 2 30 1000 50 4 5 0 100 0", want: 1410 * time.Millisecond},
		"an old kernel without steal and guest": {
			line: "cpu  100 2 30 1000 50 4 5", want: 1410 * time.Millisecond},
		"idle and iowait are not busy": {
			line: "cpu  0 0 0 99999 99999 0 0 0 0 0", want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &FS{ProcRoot: t.TempDir()}
			writeFakeFile(t, filepath.Join(f.ProcRoot, "stat"), tc.line+"\ncpu0 0 0 0 0 0 0 0 0 0 0\nctxt 999\n")
			got, err := f.NodeCPUBusy()
			if err != nil || got != tc.want {
				t.Errorf("NodeCPUBusy = %v, %v; want %v", got, err, tc.want)
			}
		})
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
