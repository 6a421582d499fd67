package framework

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// Setup is what Run starts for a suite, in the order of its fields; the
// suite stops it newest first when it closes.
type Setup struct {
	// Name names the suite in its messages and its logs directory.
	Name string
	// ManagerLog is where controller-runtime logs: the manager a suite
	// runs in-process, and envtest.
	ManagerLog ManagerLog
	// Backfill builds cmd/backfill into the logs directory first
	// (Suite.Backfill), for suites that run the binary as a user does.
	Backfill bool
	// APIServer is the kube-apiserver and etcd to start, from
	// KubernetesBinDir, with the CRDs of deploy/crds installed.
	APIServer APIServerKind
	// Controllers, unless empty, runs kube-controller-manager with these
	// controllers, e.g. "garbage-collector-controller,namespace-controller".
	Controllers string
	// Scheduler runs kube-scheduler.
	Scheduler bool
	// Kwok runs kwok's simulated nodes (Suite.Kwok); with KwokServeLogs,
	// kwok also serves container logs to the apiserver (`kubectl logs`).
	Kwok, KwokServeLogs bool
}

// APIServerKind is which apiserver a suite starts.
type APIServerKind int

const (
	// PlainAPIServer is StartAPIServer's: the default.
	PlainAPIServer APIServerKind = iota
	// AggregatingAPIServer is StartAggregatingAPIServer's, with the
	// aggregation layer's front proxy, for metrics-server.
	AggregatingAPIServer
	// NoAPIServer starts no control plane at all: for suites that test a
	// build, or start their cluster themselves.
	NoAPIServer
)

// Run is a suite's TestMain: it starts what setup asks for, then calls
// prepare (nil for none) for the suite's own fixtures and servers, such as
// its nodes and the manager (StartManager), runs the tests, and closes
// the suite. A failure to start is the suite's (Suite.Fail), and skips
// the tests. Run returns the exit code:
//
//	func TestMain(m *testing.M) {
//		os.Exit(framework.Run(m, framework.Setup{Name: "example", Scheduler: true}, prepare))
//	}
func Run(m *testing.M, setup Setup, prepare func(s *Suite) error) (code int) {
	s, err := NewSuite(setup.Name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { code = s.Close(code) }()

	if err := s.start(setup); err != nil {
		return s.Fail(err)
	}
	if prepare != nil {
		if err := prepare(s); err != nil {
			return s.Fail(err)
		}
	}
	return m.Run()
}

// start starts what setup asks for, registering each stop as it goes.
func (s *Suite) start(setup Setup) error {
	if err := setup.check(); err != nil {
		return err
	}
	if err := s.setManagerLog(setup.ManagerLog); err != nil {
		return err
	}
	if setup.Backfill {
		var err error
		if s.Backfill, err = BuildBackfill(s.Logs); err != nil {
			return err
		}
	}
	if setup.APIServer == NoAPIServer {
		return nil
	}
	if err := s.startAPIServer(setup.APIServer); err != nil {
		return err
	}
	if setup.Controllers != "" {
		if err := s.StartControllerManager(s.APIServer, setup.Controllers); err != nil {
			return err
		}
	}
	if setup.Scheduler {
		if err := s.StartScheduler(s.APIServer); err != nil {
			return err
		}
	}
	if setup.Kwok {
		var err error
		if s.Kwok, err = s.StartKwok(s.APIServer, setup.KwokServeLogs); err != nil {
			return err
		}
	}
	return nil
}

// check refuses a Setup that asks for a server without what it runs
// against.
func (setup Setup) check() error {
	if setup.APIServer == NoAPIServer && (setup.Controllers != "" || setup.Scheduler || setup.Kwok) {
		return errors.New("kube-controller-manager, kube-scheduler and kwok need an apiserver")
	}
	if setup.KwokServeLogs && !setup.Kwok {
		return errors.New("KwokServeLogs needs Kwok")
	}
	return nil
}

// startAPIServer starts the apiserver and etcd of kind (Suite.APIServer).
func (s *Suite) startAPIServer(kind APIServerKind) error {
	var err error
	if kind == AggregatingAPIServer {
		s.APIServer, err = StartAggregatingAPIServer(s.Logs)
	} else {
		s.APIServer, err = StartAPIServer()
	}
	if err != nil {
		return err
	}
	s.OnStop("kube-apiserver and etcd", s.APIServer.Stop)
	return nil
}
