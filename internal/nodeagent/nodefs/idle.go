package nodefs

import (
	"errors"
	"os"
	"path/filepath"
)

// ErrNoCPUIdle is returned where the kernel has no cpu.idle (before 5.15).
var ErrNoCPUIdle = errors.New("the kernel has no cpu.idle (Linux 5.15 or later has it)")

// SetCPUIdle marks a cgroup's tasks as the scheduler's idle class (cpu.idle 1,
// SCHED_IDLE for the group) or takes the mark off. The scheduler preempts an
// idle group at once when a task of another wakes, and places a waking task on
// a CPU that runs only idle tasks as if that CPU were free: what CPU weights
// alone do not give online pods. Set it on pod cgroups only: on a QoS cgroup
// the kernel then refuses the kubelet's cpu.shares writes, and the kubelet
// fails to start. It writes only when the value differs.
func (f *FS) SetCPUIdle(group string, idle bool) error {
	path := filepath.Join(f.path(cpuCtl, group), "cpu.idle")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) && f.Exists(group) {
		return ErrNoCPUIdle
	}
	want := "0"
	if idle {
		want = "1"
	}
	if current, err := readString(path); err == nil && current == want {
		return nil
	}
	return f.writeFile(path, want)
}
