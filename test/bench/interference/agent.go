package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/nodeagent"
	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

// agentFlags are the node agent's settings, backfill's defaults unless
// the flags say otherwise: the bench is where they are chosen.
type agentFlags struct{ settings nodeagent.Settings }

func defaultAgentFlags() agentFlags { return agentFlags{settings: nodeagent.DefaultSettings()} }

func (a *agentFlags) register(fs *flag.FlagSet) {
	s := &a.settings
	fs.DurationVar(&s.Interval, "interval", s.Interval, "Node agent: how often it measures and sets the offline ceiling")
	fs.IntVar(&s.CPUThreshold, "cpu-threshold", s.CPUThreshold, "Node agent: percent of the node's CPUs online, system and offline may use together")
	fs.IntVar(&s.CPUFloor, "cpu-floor", s.CPUFloor, "Node agent: percent of the node's CPUs offline always keeps")
	fs.IntVar(&s.CPUGrowth, "cpu-growth", s.CPUGrowth, "Node agent: percent of the node's CPUs the offline ceiling may grow per tick")
	fs.BoolVar(&s.CPUIdle, "cpu-idle", s.CPUIdle, "Node agent: put the offline pod in the scheduler's idle class (cpu.idle)")
}

func (a *agentFlags) validate() error { return a.settings.Validate() }

func (a *agentFlags) String() string {
	s := a.settings
	return fmt.Sprintf("threshold %d%%, floor %d%%, growth %d%%/tick, interval %s, cpu.idle %t", s.CPUThreshold, s.CPUFloor, s.CPUGrowth, s.Interval, s.CPUIdle)
}

// staticPods are the bench's pods as the agent would learn them from the
// API: the online pod, and the offline pod it caps.
type staticPods []nodeagent.Pod

func (p staticPods) Pods(context.Context) ([]nodeagent.Pod, error) { return p, nil }

func podsOf(l *layout) staticPods {
	return staticPods{
		{Namespace: "bench", Name: l.online.name, UID: types.UID(l.online.uid), QOS: corev1.PodQOSBurstable},
		{
			Namespace: "bench", Name: l.offline.name, UID: types.UID(l.offline.uid), QOS: corev1.PodQOSBestEffort, Reclaimed: true,
			// A BestEffort pod has no quota of its own to restore.
			Limits: nodefs.Limits{Pod: -1, Containers: map[string]int64{l.offline.containerID: -1}},
			Weight: 1000,
		},
	}
}

// agentRun is the real node agent running in the bench's process, on the
// bench's own kubepods.
type agentRun struct {
	agent  *nodeagent.Agent
	cancel context.CancelFunc
	done   chan error
}

func startAgent(ctx context.Context, b *bench) (*agentRun, error) {
	version := nodefs.V1
	if b.hier.v2 {
		version = nodefs.V2
	}
	fs := &nodefs.FS{Root: b.hier.root, Version: version, Driver: nodefs.Cgroupfs, Parent: b.layout.sub, ProcRoot: b.cfg.procRoot}
	a, err := nodeagent.New(nodeagent.Config{FS: fs, Pods: podsOf(b.layout), Settings: b.cfg.agent.settings, Log: logr.Discard()})
	if err != nil {
		return nil, fmt.Errorf("starting the node agent: %w", err)
	}
	actx, cancel := context.WithCancel(ctx)
	r := &agentRun{agent: a, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- a.Run(actx) }()
	return r, nil
}

// stop ends the agent; Run lifts every ceiling it set before it returns.
func (r *agentRun) stop() {
	r.cancel()
	if err := <-r.done; err != nil {
		fmt.Printf("  node agent: %v\n", err)
	}
}

// ceiling is the offline ceiling the agent set last, in cores.
func (r *agentRun) ceiling() (float64, bool) {
	t := r.agent.Last()
	return t.Ceiling, !t.At.IsZero()
}
