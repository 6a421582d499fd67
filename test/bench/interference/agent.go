package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/nodeagent"
	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

// registerAgent binds the node agent's CPU settings to the bench's flags,
// backfill's defaults unless they say otherwise: every one is explicit in
// the report.
func registerAgent(fs *flag.FlagSet, s *nodeagent.Settings) {
	fs.DurationVar(&s.Interval, "interval", s.Interval, "Node agent: how often it measures and sets the offline ceiling")
	fs.IntVar(&s.CPUThreshold, "cpu-threshold", s.CPUThreshold, "Node agent: percent of the node's CPUs online, system and offline may use together")
	fs.IntVar(&s.CPUActivation, "cpu-activation", s.CPUActivation, "Node agent: percent of the node's CPUs online and system must use before the ceiling applies (0: always)")
	fs.IntVar(&s.CPUFloor, "cpu-floor", s.CPUFloor, "Node agent: percent of the node's CPUs offline always keeps")
	fs.IntVar(&s.CPUGrowth, "cpu-growth", s.CPUGrowth, "Node agent: percent of the node's CPUs the offline ceiling may grow per tick")
	fs.BoolVar(&s.CPUIdle, "cpu-idle", s.CPUIdle, "Node agent: put the offline pod in the scheduler's idle class (cpu.idle)")
}

// agentString is the settings as the agent's own flags.
func agentString(s nodeagent.Settings) string {
	return fmt.Sprintf("--interval=%s --cpu-threshold=%d --cpu-activation=%d --cpu-floor=%d --cpu-growth=%d --cpu-idle=%t",
		s.Interval, s.CPUThreshold, s.CPUActivation, s.CPUFloor, s.CPUGrowth, s.CPUIdle)
}

// parseSweep reads -sweep: agent variants separated by ";", each a list
// of the agent's flags separated by ",": "cpu-threshold=70;cpu-idle=false,cpu-activation=0".
func parseSweep(s string, base nodeagent.Settings) ([]variant, error) {
	var out []variant
	for _, v := range strings.Split(s, ";") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
		settings := base
		registerAgent(fs, &settings)
		var args []string
		for _, kv := range strings.Split(v, ",") {
			args = append(args, "-"+strings.TrimSpace(kv))
		}
		fs.SetOutput(new(strings.Builder))
		if err := fs.Parse(args); err != nil {
			return nil, fmt.Errorf("-sweep variant %q: %w (a variant is the agent's flags without dashes, e.g. cpu-threshold=70,cpu-idle=false)", v, err)
		}
		if err := settings.Validate(); err != nil {
			return nil, fmt.Errorf("-sweep variant %q: %w", v, err)
		}
		out = append(out, variant{label: v, settings: settings})
	}
	return out, nil
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

func startAgent(ctx context.Context, b *bench, s nodeagent.Settings) (*agentRun, error) {
	version := nodefs.V1
	if b.hier.v2 {
		version = nodefs.V2
	}
	fs := &nodefs.FS{Root: b.hier.root, Version: version, Driver: nodefs.Cgroupfs, Parent: b.layout.sub, ProcRoot: b.cfg.procRoot}
	a, err := nodeagent.New(nodeagent.Config{FS: fs, Pods: podsOf(b.layout), Settings: s, Log: logr.Discard()})
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

func itoa(n int) string { return strconv.Itoa(n) }
