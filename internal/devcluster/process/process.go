// Package process runs the local cluster's servers (kwok, the Kubernetes
// binaries) as child processes. Each is stopped by the PID recorded when it
// started, never looked up by name, so that nothing else on the machine is
// ever signalled.
package process

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Process is a child process with its output in a log file.
type Process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has exited and been reaped
	err     error         // how it exited; read only after done is closed
}

// Start runs binary with args, appending its stdout and stderr to logPath
// (created if missing). env, when not nil, replaces the environment.
func Start(binary string, args []string, env []string, logPath string) (*Process, error) {
	return StartNamed(filepath.Base(binary), binary, args, env, logPath)
}

// StartNamed is Start for a server run through another program (a
// wrapper that prepares its namespace, say), known by name.
func StartNamed(name, binary string, args []string, env []string, logPath string) (*Process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the log of %s: %w", binary, err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = env
	// A process group of its own: Ctrl-C in a terminal reaches only the
	// parent, which stops its children in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	p := &Process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = log.Close()
		close(p.done)
	}()
	return p, nil
}

// Name is the name it was started by: the binary's base name for Start.
func (p *Process) Name() string { return p.name }

// PID is the process id recorded at start.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// LogPath is the file holding the process's output.
func (p *Process) LogPath() string { return p.logPath }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait blocks until the process exits and returns how it exited.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Stop sends SIGTERM to the recorded PID and waits up to timeout for the
// process to exit, then kills it. A process that exits on SIGTERM, whatever
// its exit status, stopped cleanly; one that had to be killed is an error.
func (p *Process) Stop(timeout time.Duration) error {
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signalling %s (pid %d): %w", p.name, p.PID(), err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
		_ = p.cmd.Process.Kill() // it may have exited meanwhile
		<-p.done
		return fmt.Errorf("%s (pid %d) did not stop within %s of SIGTERM and was killed", p.name, p.PID(), timeout)
	}
}

// FreePorts asks the kernel for n distinct free loopback ports.
func FreePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
