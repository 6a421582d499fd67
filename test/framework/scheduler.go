package framework

import "strconv"

// StartScheduler runs kube-scheduler against the apiserver, logging into
// dir. extraArgs are appended, e.g. --feature-gates or --v.
func (a *APIServer) StartScheduler(dir string, extraArgs ...string) (*Process, error) {
	if err := requireBinaries("kube-scheduler"); err != nil {
		return nil, err
	}
	path, err := a.AdminKubeconfig(dir, "scheduler")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--kubeconfig=" + path,
		"--authentication-kubeconfig=" + path,
		"--authorization-kubeconfig=" + path,
		"--authentication-skip-lookup=true",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--leader-elect=false",
	}, extraArgs...)
	return startProcess("kube-scheduler", dir, args...)
}
