package devcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Options shape the local cluster.
type Options struct {
	// StateDir holds the kubeconfig, logs, data and state.json.
	StateDir string
	// BinDir holds the binaries hack/tools builds.
	BinDir string
	// RepoDir is the backfill checkout that builds missing binaries; empty
	// when the binaries must already be there.
	RepoDir string
	// CPUNodes and GPUNodes count the simulated nodes of each kind.
	CPUNodes, GPUNodes int
	// NodeCPU and NodeMemory size every node; GPUsPerNode sizes GPU nodes.
	NodeCPU, NodeMemory string
	GPUsPerNode         int
	// TrainingDuration is how long a simulated training replica runs
	// before it exits 0.
	TrainingDuration time.Duration
	// DayLength is how long a day of the demo's online service lasts: its
	// use follows a diurnal curve compressed into it, and a backlog of
	// training jobs fills what it leaves idle.
	DayLength time.Duration
	// Demo loads the online service and the example TFJobs.
	Demo bool
	// Gang turns on Kubernetes' gang scheduling (the GenericWorkload
	// feature gate and scheduling.k8s.io/v1beta1 PodGroups).
	Gang bool
	// Kueue runs Kueue with its TFJob integration on and a ready-to-use
	// LocalQueue, QueueNamespace/QueueName.
	Kueue bool
	// Manager runs the backfill manager inside `dev up`. Without it the
	// cluster waits for one started on its own (`backfill manager`), e.g.
	// under a debugger, or several with leader election.
	Manager bool
	// RestartComponents starts a control-plane process that exits again,
	// with the same arguments and data, as a kubelet restarts static pods;
	// without it the cluster stops when one exits.
	RestartComponents bool
}

// DefaultOptions are three CPU nodes and two GPU nodes of 8 GPUs, 16 cores
// and 64 GiB each, training that runs three minutes.
func DefaultOptions() Options {
	return Options{
		StateDir:         defaultStateDir(),
		CPUNodes:         3,
		GPUNodes:         2,
		NodeCPU:          "16",
		NodeMemory:       "64Gi",
		GPUsPerNode:      8,
		TrainingDuration: 3 * time.Minute,
		DayLength:        24 * time.Minute,
		Demo:             true,
		Gang:             true,
		Manager:          true,
	}
}

// defaultStateDir is under the user's cache directory.
func defaultStateDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "backfill", "dev")
}

// Validate says what is wrong with the options and how to fix it.
func (o Options) Validate() error {
	if o.StateDir == "" {
		return fmt.Errorf("--state-dir is empty: give a directory for the cluster's state")
	}
	if o.CPUNodes < 0 || o.GPUNodes < 0 || o.CPUNodes+o.GPUNodes == 0 {
		return fmt.Errorf("--cpu-nodes=%d --gpu-nodes=%d: need at least one node, and no negative count", o.CPUNodes, o.GPUNodes)
	}
	if o.CPUNodes+o.GPUNodes > 100 {
		return fmt.Errorf("--cpu-nodes + --gpu-nodes = %d: at most 100 simulated nodes", o.CPUNodes+o.GPUNodes)
	}
	for flag, q := range map[string]string{"--node-cpu": o.NodeCPU, "--node-memory": o.NodeMemory} {
		v, err := resource.ParseQuantity(q)
		if err != nil || v.Sign() <= 0 {
			return fmt.Errorf("%s=%q: must be a positive quantity such as 16 or 64Gi", flag, q)
		}
	}
	if o.GPUsPerNode < 1 || o.GPUsPerNode > 16 {
		return fmt.Errorf("--gpus-per-node=%d: must be 1 to 16", o.GPUsPerNode)
	}
	if o.DayLength < 2*time.Minute || o.DayLength > 48*time.Hour {
		return fmt.Errorf("--day=%v: must be from 2m to 48h, e.g. 24m for an hour of the online service's day per minute", o.DayLength)
	}
	if o.runsInference() {
		if err := validateInferenceDay(o.DayLength); err != nil {
			return err
		}
	}
	if o.TrainingDuration < time.Second {
		return fmt.Errorf("--training-duration=%v: must be at least 1s", o.TrainingDuration)
	}
	return nil
}
