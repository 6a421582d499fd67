package nodefs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSetCPUIdle(t *testing.T) {
	root := t.TempDir()
	f := &FS{Root: root, Version: V1, Driver: Cgroupfs}
	group := f.PodGroup("BestEffort", "u1")
	dir := f.path(cpuCtl, group)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.SetCPUIdle(group, true); !errors.Is(err, ErrNoCPUIdle) {
		t.Fatalf("SetCPUIdle without cpu.idle = %v, want ErrNoCPUIdle", err)
	}
	file := filepath.Join(dir, "cpu.idle")
	if err := os.WriteFile(file, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var writes []string
	f.write = func(path, value string) error {
		writes = append(writes, value)
		return os.WriteFile(path, []byte(value+"\n"), 0o644)
	}
	for _, idle := range []bool{true, true, false} {
		if err := f.SetCPUIdle(group, idle); err != nil {
			t.Fatalf("SetCPUIdle(%t): %v", idle, err)
		}
	}
	if got := len(writes); got != 2 || writes[0] != "1" || writes[1] != "0" {
		t.Errorf("writes %q, want [1 0]: an unchanged value is not written again", writes)
	}
}
