package devcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// State is what a running local cluster records in its state directory,
// for `dev status`, `dev down` and scripts: where things are and which
// processes to stop.
type State struct {
	// PID is the process of `dev up` that supervises everything.
	PID        int       `json:"pid"`
	Ready      bool      `json:"ready"`
	StartedAt  time.Time `json:"startedAt"`
	Kubeconfig string    `json:"kubeconfig"`
	Server     string    `json:"server"`
	Prometheus string    `json:"prometheusURL"`
	// Alertmanager receives the alerts of Prometheus's rules and sends
	// them to the webhook sink, which appends each notification as a JSON
	// line to AlertSinkFile.
	Alertmanager  string `json:"alertmanagerURL,omitempty"`
	AlertSinkFile string `json:"alertSinkFile,omitempty"`
	// ManagerFlags are the flags a manager started by hand needs for the
	// cluster's reclaimed capacity (with --manager=false), and
	// ManagersFile the file naming the managers Prometheus scrapes
	// (WriteManagerTargets).
	ManagerFlags []string    `json:"managerFlags,omitempty"`
	ManagersFile string      `json:"managersFile,omitempty"`
	Components   []Component `json:"components"`
}

// Component is one server of the cluster.
type Component struct {
	Name string `json:"name"`
	// PID is set for child processes; in-process servers have the
	// supervisor's PID.
	PID int `json:"pid"`
	// Address is host:port of its health or metrics endpoint.
	Address string `json:"address"`
	Log     string `json:"log,omitempty"`
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

// ReadState reads the state of the cluster in dir; os.ErrNotExist when
// none was started there.
func ReadState(dir string) (*State, error) {
	data, err := os.ReadFile(statePath(dir))
	if err != nil {
		return nil, err
	}
	s := &State{}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("reading %s: %w", statePath(dir), err)
	}
	return s, nil
}

// write replaces the state file atomically.
func (s *State) write(dir string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(dir))
}

// Running reports whether the recorded supervisor process is alive.
func (s *State) Running() bool {
	return processAlive(s.PID)
}

// processAlive reports whether pid names a live process (signal 0 checks
// without signalling).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
