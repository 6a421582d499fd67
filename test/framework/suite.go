package framework

import (
	"fmt"
	"os"
	"path/filepath"

	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

// Suite is the frame of an integration suite's TestMain: a directory for
// the logs of the servers it starts, kept when the suite fails (or with
// BACKFILL_KEEP_LOGS set), and the stops of those servers, run newest
// first, each by the PID it recorded.
type Suite struct {
	name string
	// Logs is the directory of the servers' logs and state.
	Logs string
	// APIServer and Kwok are the servers Run started for the suite's
	// Setup, and Backfill the path of the binary it built; nil or empty
	// when the Setup did not ask for them.
	APIServer *APIServer
	Kwok      *simkwok.Kwok
	Backfill  string
	stops     []suiteStop
}

type suiteStop struct {
	what string
	stop func() error
}

// NewSuite makes the logs directory of the suite called name.
func NewSuite(name string) (*Suite, error) {
	logs, err := os.MkdirTemp("", "backfill-"+name+"-suite-")
	if err != nil {
		return nil, err
	}
	return &Suite{name: name, Logs: logs}, nil
}

// OnStop runs stop when the suite closes, before the stops added earlier.
func (s *Suite) OnStop(what string, stop func() error) {
	s.stops = append(s.stops, suiteStop{what, stop})
}

// Fail reports err as the suite's and returns the exit code of a failure.
func (s *Suite) Fail(err error) int {
	fmt.Fprintf(os.Stderr, "%s suite: %v\n", s.name, err)
	return 1
}

// Close stops every server, newest first, removes the logs unless the suite
// failed, and returns its exit code.
func (s *Suite) Close(code int) int {
	for i := len(s.stops) - 1; i >= 0; i-- {
		if err := s.stops[i].stop(); err != nil {
			fmt.Fprintf(os.Stderr, "%s suite: stopping %s: %v\n", s.name, s.stops[i].what, err)
		}
	}
	if code == 0 && os.Getenv("BACKFILL_KEEP_LOGS") == "" {
		_ = os.RemoveAll(s.Logs)
		return code
	}
	fmt.Fprintf(os.Stderr, "%s suite: logs kept in %s\n", s.name, s.Logs)
	return code
}

// StartControllerManager runs kube-controller-manager against the
// apiserver with controllers and flags added to its own, logging into the
// suite's logs, stopped when the suite closes.
func (s *Suite) StartControllerManager(a *APIServer, controllers string, flags ...string) error {
	kcm, err := a.StartControllerManager(s.Logs, controllers, flags...)
	if err != nil {
		return err
	}
	s.OnStop("kube-controller-manager", kcm.Stop)
	return nil
}

// StartScheduler runs kube-scheduler against the apiserver, logging into
// the suite's logs, stopped when the suite closes.
func (s *Suite) StartScheduler(a *APIServer) error {
	scheduler, err := a.StartScheduler(s.Logs)
	if err != nil {
		return err
	}
	s.OnStop("kube-scheduler", scheduler.Stop)
	return nil
}

// StartKwok runs kwok (bin/kwok) against the apiserver with an admin's
// kubeconfig, its state under the logs, stopped when the suite closes.
func (s *Suite) StartKwok(a *APIServer, serveLogs bool) (*simkwok.Kwok, error) {
	kubeconfig, err := a.AdminKubeconfig(s.Logs, "kwok")
	if err != nil {
		return nil, err
	}
	sim, err := simkwok.Start(simkwok.Options{
		Binary:     filepath.Join(BinDir(), "kwok"),
		Kubeconfig: kubeconfig,
		StateDir:   filepath.Join(s.Logs, "kwok"),
		ServeLogs:  serveLogs,
	})
	if err != nil {
		return nil, err
	}
	s.OnStop("kwok", sim.Stop)
	return sim, nil
}
