package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// workload is a process the bench started: this binary in a role, moved
// into its pod's container cgroup before it did any work.
type workload struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	ready chan string // the service's address, once
	done  chan struct{}

	mu     sync.Mutex
	flop   int64 // the training workload's last report
	flopAt time.Time
}

// startWorkload starts role, moves it into group and lets it begin.
func startWorkload(l *layout, name, group, role string, args ...string) (*workload, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the bench's own binary to start %s: %w", name, err)
	}
	w := &workload{name: name, ready: make(chan string, 1), done: make(chan struct{})}
	w.cmd = exec.Command(exe, append([]string{role}, args...)...)
	// If the bench dies without cleaning up, the kernel kills the
	// workload; closing stdin does the same when the bench exits.
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	w.cmd.Stderr = os.Stderr
	if w.stdin, err = w.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	stdout, err := w.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	if err := w.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go w.read(stdout)
	if err := l.moveInto(w.cmd.Process.Pid, group); err != nil {
		w.stop()
		return nil, fmt.Errorf("moving %s into %s: %w", name, group, err)
	}
	if _, err := io.WriteString(w.stdin, "go\n"); err != nil {
		w.stop()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return w, nil
}

// read takes the workload's reports until it exits, then reaps it.
func (w *workload) read(stdout io.Reader) {
	defer close(w.done)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		kind, value, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "ready":
			w.ready <- value
		case "flop":
			if n, err := strconv.ParseInt(value, 10, 64); err == nil {
				w.mu.Lock()
				w.flop, w.flopAt = n, time.Now()
				w.mu.Unlock()
			}
		}
	}
	_ = w.cmd.Wait()
}

// work is what the training workload reported last, and when.
func (w *workload) work() (flop int64, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flop, w.flopAt
}

// exited says whether the workload has ended.
func (w *workload) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// stop kills the workload by the PID the bench started and waits until it
// is reaped, so that its cgroup can be removed.
func (w *workload) stop() {
	_ = w.stdin.Close()
	_ = w.cmd.Process.Kill()
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		fmt.Fprintf(os.Stderr, "bench-interference: %s (PID %d) did not exit within 5s of SIGKILL\n", w.name, w.cmd.Process.Pid)
	}
}
