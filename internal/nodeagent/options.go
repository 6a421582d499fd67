package nodeagent

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/manager"
)

// Options are the agent's flags.
type Options struct {
	Kubeconfig           string
	NodeName             string
	MetricsAddress       string
	HealthAddress        string
	CgroupRoot           string
	ProcRoot             string
	KubeletCgroupRoot    string
	OfflinePriorityClass string
	LogLevel             string
	LogFormat            string
	Settings             Settings
}

// DefaultOptions suit a node agent in a DaemonSet.
func DefaultOptions() Options {
	return Options{
		NodeName:             os.Getenv("NODE_NAME"),
		MetricsAddress:       ":8080",
		HealthAddress:        ":8081",
		CgroupRoot:           "/sys/fs/cgroup",
		ProcRoot:             "/proc",
		KubeletCgroupRoot:    "/",
		OfflinePriorityClass: colocation.DefaultOfflinePriorityClass,
		LogLevel:             "info",
		LogFormat:            "json",
		Settings:             DefaultSettings(),
	}
}

func (o *Options) bindFlags(fs *pflag.FlagSet) {
	s := &o.Settings
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig; defaults to $KUBECONFIG, ~/.kube/config, then the in-cluster config.")
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "Name of the node the agent runs on (defaults to $NODE_NAME, which the DaemonSet sets from spec.nodeName).")
	fs.StringVar(&o.MetricsAddress, "metrics-bind-address", o.MetricsAddress, "Address of the /metrics endpoint; 0 turns it off.")
	fs.StringVar(&o.HealthAddress, "health-probe-bind-address", o.HealthAddress, "Address of the /healthz and /readyz endpoints; 0 turns them off.")
	fs.StringVar(&o.CgroupRoot, "cgroup-root", o.CgroupRoot, "Where the host's cgroup filesystems are mounted, read-write.")
	fs.StringVar(&o.ProcRoot, "proc-root", o.ProcRoot, "The host's /proc (the agent runs with hostPID).")
	fs.StringVar(&o.KubeletCgroupRoot, "kubelet-cgroup-root", o.KubeletCgroupRoot, "The kubelet's --cgroup-root, under which it makes kubepods (systemd driver: kubepods.slice).")
	fs.StringVar(&o.OfflinePriorityClass, "offline-priority-class", o.OfflinePriorityClass, "PriorityClass of offline pods: the manager's --offline-priority-class.")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "Log verbosity: error, info, debug, or a number (higher is more verbose).")
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "Log format: json or text.")
	fs.DurationVar(&s.Interval, "interval", s.Interval, "Time between two measurements of the node, each of which sets the offline pods' CPU ceiling.")
	fs.IntVar(&s.CPUThreshold, "cpu-threshold", s.CPUThreshold, "Percent of the node's CPUs that online pods, the system and offline pods on reclaimed capacity may use together: offline pods get what the others leave below it.")
	fs.IntVar(&s.CPUActivation, "cpu-activation", s.CPUActivation, "Percent of the node's CPUs online pods and the system must use together before the ceiling applies; until then offline pods run uncapped, under the kernel's CPU weights (a binding CFS quota costs online pods tail latency of its own). 0: always.")
	fs.IntVar(&s.CPUActivationBand, "cpu-activation-band", s.CPUActivationBand, "Points of the node's CPUs below --cpu-activation that online and system use must fall to before the ceiling is released, so that use hovering at the activation does not set and lift it every tick (0 to below --cpu-activation).")
	fs.IntVar(&s.CPUReleaseTicks, "cpu-release-ticks", s.CPUReleaseTicks, "Ticks of --interval in a row that online and system use must stay below --cpu-activation less --cpu-activation-band before the ceiling is released (0 to 600; 0 or 1: at the first).")
	fs.IntVar(&s.CPUFloor, "cpu-floor", s.CPUFloor, "Percent of the node's CPUs offline pods keep however busy online pods are, so that training slows but never stops.")
	fs.IntVar(&s.CPUGrowth, "cpu-growth", s.CPUGrowth, "Percent of the node's CPUs by which the offline ceiling may grow per --interval; it shrinks at once.")
	fs.BoolVar(&s.CPUIdle, "cpu-idle", s.CPUIdle, "Put offline pods on reclaimed capacity in the scheduler's idle class (their pod cgroup's cpu.idle; Linux 5.15 or later), so that online threads preempt them at once and take the CPUs they run on as if free, whether the ceiling applies or not; a pod being resized leaves it until the resize is done. Off: CPU weights and the ceiling alone.")
	fs.IntVar(&s.MemoryThreshold, "memory-threshold", s.MemoryThreshold, "Percent of the node's memory in use above which the agent evicts offline pods on reclaimed capacity (least work lost first) until use is 2 points below; 0 turns memory evictions off.")
}

// Validate says what is wrong with the flags and how to fix it.
func (o *Options) Validate() error {
	errs := []error{o.Settings.Validate()}
	if o.NodeName == "" {
		errs = append(errs, errors.New("--node-name: required; set it (or $NODE_NAME) to the name of the node the agent runs on, as the DaemonSet does from spec.nodeName"))
	}
	if o.CgroupRoot == "" || o.ProcRoot == "" {
		errs = append(errs, errors.New("--cgroup-root and --proc-root: must name the host's /sys/fs/cgroup and /proc"))
	}
	if _, err := manager.LogLevel(o.LogLevel); err != nil {
		errs = append(errs, err)
	}
	if o.LogFormat != "json" && o.LogFormat != "text" {
		errs = append(errs, fmt.Errorf("--log-format=%q: must be json or text", o.LogFormat))
	}
	return errors.Join(errs...)
}
