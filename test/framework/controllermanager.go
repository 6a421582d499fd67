package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/backfill-dev/backfill/internal/devcluster/process"
)

// Process is a server a suite started; it is stopped by the PID recorded
// at start, never by name.
type Process struct {
	Name string
	proc *process.Process
}

// Stop sends SIGTERM, waits up to 10 s, then kills.
func (p *Process) Stop() error {
	if p == nil || p.proc == nil {
		return nil
	}
	return p.proc.Stop(10 * time.Second)
}

// PID is the process id recorded at start.
func (p *Process) PID() int { return p.proc.PID() }

// StartControllerManager runs kube-controller-manager against the
// apiserver with the given controllers (e.g. garbage-collector-controller)
// and flags added to its own ("--name=value"), logging into dir.
func (a *APIServer) StartControllerManager(dir string, controllers string, flags ...string) (*Process, error) {
	if err := requireBinaries("kube-controller-manager"); err != nil {
		return nil, err
	}
	path, err := a.AdminKubeconfig(dir, "controller-manager")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--kubeconfig=" + path,
		"--authentication-kubeconfig=" + path,
		"--authorization-kubeconfig=" + path,
		"--authentication-skip-lookup=true",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--leader-elect=false",
		"--controllers=" + controllers,
	}
	return startProcess("kube-controller-manager", dir, append(args, flags...)...)
}

// AdminKubeconfig writes dir/name.kubeconfig for a new user of that name in
// system:masters, and returns its path.
func (a *APIServer) AdminKubeconfig(dir, name string) (string, error) {
	return a.UserKubeconfig(dir, name, "system:masters")
}

// UserKubeconfig writes dir/name.kubeconfig for a new user of that name in
// groups (and system:authenticated), and returns its path. Outside
// system:masters, a user may do only what RBAC grants it, and API Priority
// and Fairness paces it.
func (a *APIServer) UserKubeconfig(dir, name string, groups ...string) (string, error) {
	user, err := a.Env.AddUser(envtest.User{Name: name, Groups: append(groups, "system:authenticated")}, nil)
	if err != nil {
		return "", fmt.Errorf("adding a %s user: %w", name, err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("building the %s kubeconfig: %w", name, err)
	}
	path := filepath.Join(dir, name+".kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// startProcess starts the binary called name with args, its output in
// dir/name.log.
func startProcess(name, dir string, args ...string) (*Process, error) {
	proc, err := process.Start(binaryPath(name), args, nil, filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	return &Process{Name: name, proc: proc}, nil
}

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	ports, err := process.FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}
