package devcluster

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Down stops the cluster running from dir: it asks the supervising `dev up`
// to stop everything and waits for it; if that process is gone but left
// children behind, it stops them by their recorded PIDs.
func Down(dir string, timeout time.Duration) error {
	s, err := ReadState(dir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no local cluster runs from %s", dir)
	}
	if err != nil {
		return err
	}
	if s.Running() {
		if err := syscall.Kill(s.PID, syscall.SIGTERM); err != nil {
			return fmt.Errorf("stopping dev up (pid %d): %w", s.PID, err)
		}
		if !waitGone(s.PID, timeout) {
			return fmt.Errorf("dev up (pid %d) did not stop within %v; see %s", s.PID, timeout, dir)
		}
	}
	var errs []error
	for _, c := range s.Components {
		if c.PID == s.PID || !processAlive(c.PID) {
			continue
		}
		_ = syscall.Kill(c.PID, syscall.SIGTERM)
		if !waitGone(c.PID, stopTimeout) {
			_ = syscall.Kill(c.PID, syscall.SIGKILL)
			errs = append(errs, fmt.Errorf("%s (pid %d) ignored SIGTERM and was killed", c.Name, c.PID))
		}
	}
	if err := os.Remove(statePath(dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// waitGone waits until pid has exited.
func waitGone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !processAlive(pid) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return !processAlive(pid)
}
