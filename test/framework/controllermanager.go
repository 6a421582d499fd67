package framework

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Process is a server a suite started; it is stopped by the PID recorded
// at start, never by name.
type Process struct {
	Name string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// Stop sends SIGTERM, waits up to 10 s, then kills.
func (p *Process) Stop() error {
	if p == nil || p.cmd.Process == nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM) // it may have exited already
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s (pid %d) did not stop on SIGTERM and was killed", p.Name, p.cmd.Process.Pid)
	}
}

// StartControllerManager runs kube-controller-manager against the
// apiserver with the given controllers (e.g. garbage-collector-controller),
// logging into dir.
func (a *APIServer) StartControllerManager(dir string, controllers string) (*Process, error) {
	if err := requireBinaries("kube-controller-manager"); err != nil {
		return nil, err
	}
	user, err := a.Env.AddUser(envtest.User{Name: "controller-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("adding a controller-manager user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "controller-manager.kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return startProcess("kube-controller-manager", dir,
		"--kubeconfig="+path,
		"--authentication-kubeconfig="+path,
		"--authorization-kubeconfig="+path,
		"--authentication-skip-lookup=true",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--leader-elect=false",
		"--controllers="+controllers,
	)
}

// startProcess starts bin/name with args, its output in dir/name.log.
func startProcess(name, dir string, args ...string) (*Process, error) {
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(BinDir(), name), args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // a stopped server exits non-zero
		_ = log.Close()
		close(p.done)
	}()
	return p, nil
}

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}
