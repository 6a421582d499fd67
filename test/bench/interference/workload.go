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
// into its cgroup before it did any work.
type workload struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// lines are what it prints, but for the training workload's reports,
	// which work keeps; closed when it exits.
	lines chan string
	done  chan struct{}

	mu     sync.Mutex
	flop   int64 // the training workload's last report
	flopAt time.Time
}

// startWorkload starts role, moves it into groups and lets it begin.
func startWorkload(l *layout, name string, groups []string, role string, args ...string) (*workload, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the bench's own binary to start %s: %w", name, err)
	}
	w := &workload{name: name, lines: make(chan string, 1<<16), done: make(chan struct{})}
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
	for _, g := range groups {
		if err := l.moveInto(w.cmd.Process.Pid, g); err != nil {
			w.stop()
			return nil, fmt.Errorf("moving %s into %s: %w", name, g, err)
		}
	}
	if err := w.send("go"); err != nil {
		w.stop()
		return nil, err
	}
	return w, nil
}

// send writes one line to the workload.
func (w *workload) send(line string) error {
	if _, err := io.WriteString(w.stdin, line+"\n"); err != nil {
		return fmt.Errorf("telling %s %q: %w", w.name, line, err)
	}
	return nil
}

// read takes the workload's lines until it exits, then reaps it.
func (w *workload) read(stdout io.Reader) {
	defer close(w.done)
	defer close(w.lines)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "flop "); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				w.mu.Lock()
				w.flop, w.flopAt = n, time.Now()
				w.mu.Unlock()
			}
			continue
		}
		w.lines <- line
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
