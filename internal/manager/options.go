package manager

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// Options are the manager's flags.
type Options struct {
	Kubeconfig              string
	MetricsAddress          string
	HealthAddress           string
	LeaderElect             bool
	LeaderElectionNamespace string
	LeaderElectionID        string
	LeaseDuration           time.Duration
	DefaultCleanPodPolicy   string
	ClusterDomain           string
	Workers                 int
	QPS                     float32
	Burst                   int
	LogLevel                string
	LogFormat               string
	OfflinePriorityClass    string
	OfflinePriority         int32
	GracePeriod             time.Duration
	StopNotice              time.Duration
	GangSchedulerName       string
	ColocationMetrics       bool
}

// DefaultOptions suit a production cluster.
func DefaultOptions() Options {
	return Options{
		MetricsAddress:        ":8080",
		HealthAddress:         ":8081",
		LeaderElectionID:      "backfill-manager",
		LeaseDuration:         15 * time.Second,
		DefaultCleanPodPolicy: string(kubeflowv1.CleanPodPolicyRunning),
		Workers:               8,
		QPS:                   200,
		Burst:                 400,
		LogLevel:              "info",
		LogFormat:             "json",
		OfflinePriorityClass:  colocation.DefaultOfflinePriorityClass,
		OfflinePriority:       colocation.DefaultOfflinePriority,
		GracePeriod:           60 * time.Second,
		StopNotice:            15 * time.Second,
		GangSchedulerName:     "scheduler-plugins-scheduler",
		ColocationMetrics:     true,
	}
}

func (o *Options) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig; defaults to $KUBECONFIG, ~/.kube/config, then the in-cluster config.")
	fs.StringVar(&o.MetricsAddress, "metrics-bind-address", o.MetricsAddress, "Address of the /metrics endpoint; 0 turns it off.")
	fs.StringVar(&o.HealthAddress, "health-probe-bind-address", o.HealthAddress, "Address of the /healthz and /readyz endpoints; 0 turns them off.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Elect a leader among manager replicas, so that one reconciles at a time; needed when running more than one.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "Namespace of the leader-election Lease; defaults to the manager's own namespace in a cluster.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "Name of the leader-election Lease.")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration, "How long a standby waits before taking over a lease its leader stopped renewing.")
	fs.StringVar(&o.DefaultCleanPodPolicy, "default-clean-pod-policy", o.DefaultCleanPodPolicy, "cleanPodPolicy for jobs that set none: All, Running or None. Running stops parameter servers once a job is done (Kubeflow v1 used None).")
	fs.StringVar(&o.ClusterDomain, "cluster-domain", o.ClusterDomain, "Cluster DNS domain appended to the service names in TF_CONFIG, e.g. cluster.local; empty for none.")
	fs.IntVar(&o.Workers, "workers", o.Workers, "Number of TFJobs reconciled at once.")
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "Sustained requests per second to the apiserver.")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Burst of requests to the apiserver above --kube-api-qps.")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "Log verbosity: error, info, debug, or a number (higher is more verbose).")
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "Log format: json or text.")
	fs.StringVar(&o.OfflinePriorityClass, "offline-priority-class", o.OfflinePriorityClass, "PriorityClass of training pods that name none; created at start unless it exists.")
	fs.Int32Var(&o.OfflinePriority, "offline-priority", o.OfflinePriority, "Value of --offline-priority-class when the manager creates it; below 0, the priority of pods without a class, so that training yields to online work.")
	fs.DurationVar(&o.StopNotice, "stop-notice", o.StopNotice, "How long before stopping a running training pod itself (suspend, clean-up after the job) the operator annotates it with backfill.dev/stop-reason and backfill.dev/stop-at; 0 stops at once.")
	fs.StringVar(&o.GangSchedulerName, "gang-scheduler-name", o.GangSchedulerName, "schedulerName of gang pods when the cluster's gang scheduler is scheduler-plugins (its scheduler's name in your cluster).")
	fs.BoolVar(&o.ColocationMetrics, "colocation-metrics", o.ColocationMetrics, "Export the co-location state metrics (backfill_node_*, backfill_offline_pod_info): the leader then watches every pod and node of the cluster, keeping a small summary of each (name, tier, resources).")
	fs.DurationVar(&o.GracePeriod, "termination-grace-period", o.GracePeriod, "terminationGracePeriodSeconds of training pods whose template sets none: the time to save a checkpoint after SIGTERM.")
}

// Validate says what is wrong with the flags and how to fix it.
func (o *Options) Validate() error {
	switch kubeflowv1.CleanPodPolicy(o.DefaultCleanPodPolicy) {
	case kubeflowv1.CleanPodPolicyAll, kubeflowv1.CleanPodPolicyRunning, kubeflowv1.CleanPodPolicyNone:
	default:
		return fmt.Errorf("--default-clean-pod-policy=%q: must be All, Running or None", o.DefaultCleanPodPolicy)
	}
	if o.Workers < 1 {
		return fmt.Errorf("--workers=%d: must be at least 1", o.Workers)
	}
	if o.QPS <= 0 {
		return fmt.Errorf("--kube-api-qps=%v: must be above 0", o.QPS)
	}
	if o.Burst < 1 {
		return fmt.Errorf("--kube-api-burst=%d: must be at least 1", o.Burst)
	}
	if o.LeaseDuration < 2*time.Second {
		return fmt.Errorf("--leader-election-lease-duration=%v: must be at least 2s", o.LeaseDuration)
	}
	if o.LogFormat != "json" && o.LogFormat != "text" {
		return fmt.Errorf("--log-format=%q: must be json or text", o.LogFormat)
	}
	if _, err := logLevel(o.LogLevel); err != nil {
		return err
	}
	if o.OfflinePriorityClass == "" {
		return fmt.Errorf("--offline-priority-class is empty: name the PriorityClass of training pods, e.g. %s", colocation.DefaultOfflinePriorityClass)
	}
	if o.OfflinePriority >= 0 {
		return fmt.Errorf("--offline-priority=%d: must be below 0, the priority of online pods without a PriorityClass, or training would preempt them", o.OfflinePriority)
	}
	if o.StopNotice < 0 || o.StopNotice > 10*time.Minute {
		return fmt.Errorf("--stop-notice=%v: must be from 0 to 10m", o.StopNotice)
	}
	if o.GracePeriod < 0 || o.GracePeriod%time.Second != 0 {
		return fmt.Errorf("--termination-grace-period=%v: must be whole seconds, 0 or more", o.GracePeriod)
	}
	return nil
}
