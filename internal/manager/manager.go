// Package manager is `backfill manager`: the TFJob controller, reclaimed
// capacity (the leader's per-node decisions), the progress report endpoint
// and the metrics, in one process.
package manager

import (
	"context"
	"fmt"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/internal/gpuloan"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// NewCommand returns `backfill manager`.
func NewCommand() *cobra.Command {
	opts := DefaultOptions()
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the TFJob operator against a cluster",
		Long: `Run the TFJob operator: it reconciles kubeflow.org/v1 TFJobs into pods and
headless services, with TF_CONFIG, restarts and status, until interrupted.
It talks to the cluster of --kubeconfig, $KUBECONFIG or ~/.kube/config, or,
inside a pod, to its own cluster.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			return Run(cmd.Context(), opts)
		},
	}
	opts.bindFlags(cmd.Flags())
	return cmd
}

// Run runs the manager until ctx ends.
func Run(ctx context.Context, opts Options) error {
	logger := NewLogger(opts.LogLevel, opts.LogFormat)
	ctrl.SetLogger(logger)
	if soft, why := applyMemoryLimit(); soft > 0 {
		logger.Info("Collecting garbage before the container's memory limit", "softLimitBytes", soft, "from", why)
	}

	cfg, err := RESTConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	return RunWithConfig(ctx, cfg, opts)
}

// RunWithConfig runs the manager against the cluster of cfg until ctx ends.
func RunWithConfig(ctx context.Context, cfg *rest.Config, opts Options) error {
	logger := ctrl.Log.WithName("manager")
	cfg, err := pacedConfig(ctx, cfg, opts, logger)
	if err != nil {
		return err
	}
	gang, err := prepareCluster(ctx, cfg, opts, logger)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, managerOptions(opts, gang))
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	recorders, err := newEventRecorders(mgr.GetConfig(), mgr.GetHTTPClient(), mgr.GetScheme(), ctrl.Log.WithName("events"))
	if err != nil {
		return err
	}
	defer recorders.stop()
	if err := setupControllers(ctx, mgr, opts, gang, recorders); err != nil {
		return err
	}
	logger.Info("Starting the manager", "host", cfg.Host, "leaderElection", opts.LeaderElect)
	return mgr.Start(ctx)
}

// pacedConfig is cfg as the manager's own, at the pace the apiserver's
// priority and fairness leave it (DecidePacing), with at most maxInFlight
// requests in flight at once.
func pacedConfig(ctx context.Context, cfg *rest.Config, opts Options, logger logr.Logger) (*rest.Config, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "backfill-manager"
	pacing, err := DecidePacing(ctx, cfg, opts.QPS, opts.Burst)
	if err != nil {
		return nil, err
	}
	pacing.log(logger)
	cfg.QPS, cfg.Burst = pacing.QPS, pacing.Burst
	cfg.Wrap(limitInFlight(maxInFlight))
	return cfg, nil
}

// prepareCluster makes the offline PriorityClass and finds the cluster's
// gang scheduler, if any.
func prepareCluster(ctx context.Context, cfg *rest.Config, opts Options, logger logr.Logger) (colocation.GangScheduler, error) {
	direct, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return colocation.GangNone, err
	}
	if err := colocation.EnsureOfflinePriorityClass(ctx, direct, opts.OfflinePriorityClass, opts.OfflinePriority); err != nil {
		return colocation.GangNone, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return colocation.GangNone, err
	}
	gang, err := colocation.DiscoverGangScheduler(dc)
	if err != nil {
		return colocation.GangNone, err
	}
	if gang == colocation.GangNone {
		logger.Info("The cluster serves no PodGroup: distributed TFJobs start without gang scheduling (turn on Kubernetes' GenericWorkload feature gate, or install Volcano or scheduler-plugins)")
	} else {
		logger.Info("Distributed TFJobs start as gangs", "gangScheduler", gang)
	}
	return gang, nil
}

// setupControllers adds the metrics, reclaimed capacity, the report
// endpoint and the TFJob controller to mgr.
func setupControllers(ctx context.Context, mgr ctrl.Manager, opts Options, gang colocation.GangScheduler, recorders *eventRecorders) error {
	view, err := clusterView(mgr, opts)
	if err != nil {
		return err
	}
	tfjobOpts := tfjobOptions(opts, gang)
	// The TFJob controller tells the metrics which jobs it retires: their
	// leaving the cache is no deletion.
	tfjobOpts.Retiring = metrics.NewRetiringJobs()
	metricsOpts := metrics.Options{OfflinePriorityClass: opts.OfflinePriorityClass, RetiredLabel: tfjob.RetiredLabel, Retiring: tfjobOpts.Retiring}
	if opts.ColocationMetrics {
		metricsOpts.View = view
	}
	if err := metrics.Setup(mgr, metricsOpts); err != nil {
		return fmt.Errorf("setting up the metrics: %w", err)
	}
	if opts.Reclaim {
		if tfjobOpts.Supply, err = setupReclaim(mgr, view, opts, recorders); err != nil {
			return err
		}
	}
	if opts.GPULoans {
		loans, err := setupGPULoans(mgr, view, opts, recorders)
		if err != nil {
			return err
		}
		tfjobOpts.Loans = loans.Gate()
	}
	if tfjobOpts.Progress, tfjobOpts.Reports, err = setupReports(mgr, opts); err != nil {
		return err
	}
	if tfjobOpts.Progress != nil {
		metrics.ReportedJobs(tfjobOpts.Progress.Len)
	}
	r := tfjob.NewReconciler(mgr.GetClient(), recorders.recorder(tfjob.ControllerName), clock.RealClock{}, tfjobOpts)
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("setting up the TFJob controller: %w", err)
	}
	return nil
}

// tfjobOptions are the TFJob controller's options from the manager's.
func tfjobOptions(opts Options, gang colocation.GangScheduler) tfjob.Options {
	return tfjob.Options{
		DefaultCleanPodPolicy: kubeflowv1.CleanPodPolicy(opts.DefaultCleanPodPolicy),
		ClusterDomain:         opts.ClusterDomain,
		Workers:               opts.Workers,
		OfflinePriorityClass:  opts.OfflinePriorityClass,
		GracePeriod:           opts.GracePeriod,
		Gang:                  gang,
		GangSchedulerName:     opts.GangSchedulerName,
		StopNotice:            opts.StopNotice,
		RetireAfter:           opts.RetireAfter,
		Reclaim:               opts.Reclaim,
	}
}

// clusterView is the slim view of every node and pod that the
// co-location metrics, reclaimed capacity and GPU loans read, run by the
// leader; nil when none is on.
func clusterView(mgr ctrl.Manager, opts Options) (*clusterview.View, error) {
	if !opts.ColocationMetrics && !opts.Reclaim && !opts.GPULoans {
		return nil, nil
	}
	view, err := clusterview.New(mgr.GetConfig(), opts.OfflinePriorityClass)
	if err != nil {
		return nil, err
	}
	return view, mgr.Add(manager.RunnableFunc(view.Start))
}

// setupReclaim adds the reclaimed-capacity controller, on the leader, and
// returns it: the TFJob controller reads what it offers.
func setupReclaim(mgr ctrl.Manager, view *clusterview.View, opts Options, recorders *eventRecorders) (*reclaim.Controller, error) {
	var source reclaim.UsageSource
	var err error
	switch opts.UsageSource {
	case UsageSourcePrometheus:
		source, err = reclaim.NewPrometheusSource(opts.PrometheusURL, opts.ReclaimSettings, opts.PrometheusRateWindow)
	default:
		source, err = reclaim.NewMetricsAPISource(mgr.GetConfig(), view, opts.ReclaimSettings)
	}
	if err != nil {
		return nil, err
	}
	c := reclaim.NewController(mgr.GetClient(), view, source, opts.ReclaimSettings, opts.StopNotice,
		recorders.recorder(reclaim.ControllerName), clock.RealClock{}, ctrl.Log)
	if opts.PrometheusURL != "" {
		signals, err := reclaim.NewOnlineSignals(opts.PrometheusURL, opts.ReclaimSettings.OnlineWindow)
		if err != nil {
			return nil, err
		}
		c.ListenTo(signals)
	}
	return c, mgr.Add(c)
}

// setupGPULoans adds the GPU loan controller, on the leader. It reads
// KEDA's ScaledObjects through the dynamic client, so that KEDA is no
// dependency, and the workloads' history from --prometheus-url if set. It
// returns the controller: the TFJob controller asks its gate before a
// job's first pods.
func setupGPULoans(mgr ctrl.Manager, view *clusterview.View, opts Options, recorders *eventRecorders) (*gpuloan.Controller, error) {
	dc, err := dynamic.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("creating the GPU loans' dynamic client: %w", err)
	}
	c, err := gpuloan.NewController(mgr.GetClient(), mgr.GetAPIReader(), dc, view, opts.GPULoanSettings, opts.OfflinePriorityClass, opts.PrometheusURL,
		recorders.recorder(gpuloan.ControllerName), clock.RealClock{}, ctrl.Log)
	if err != nil {
		return nil, err
	}
	return c, mgr.Add(c)
}

// managerOptions turn the flags into controller-runtime's options. The cache
// holds only the pods and services the operator owns, each slimmed to what
// the operator reads, without retired jobs, pods and services, finished
// jobs' templates or managedFields, so that the manager's memory grows with
// its running jobs rather than with the cluster or its history. The gang
// scheduler's PodGroups are cached the same way.
func managerOptions(opts Options, gang colocation.GangScheduler) ctrl.Options {
	ours := labels.SelectorFromSet(labels.Set{kubeflowv1.OperatorNameLabel: kubeflowv1.OperatorName})
	notRetired, err := labels.NewRequirement(tfjob.RetiredLabel, selection.DoesNotExist, nil)
	if err != nil {
		panic(err) // a constant key
	}
	live := labels.NewSelector().Add(*notRetired)
	oursLive := ours.Add(*notRetired)
	byObject := map[client.Object]cache.ByObject{
		&corev1.Pod{}:       {Label: oursLive, Transform: tfjob.SlimPod},
		&corev1.Service{}:   {Label: oursLive, Transform: tfjob.SlimService},
		&kubeflowv1.TFJob{}: {Label: live, Transform: tfjob.SlimTFJob},
	}
	if gang != colocation.GangNone {
		byObject[tfjob.EmptyPodGroup(gang)] = cache.ByObject{Label: oursLive}
	}
	lease := opts.LeaseDuration
	renew := lease * 2 / 3
	retry := lease / 5
	return ctrl.Options{
		Scheme:                        Scheme(),
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsAddress},
		HealthProbeBindAddress:        opts.HealthAddress,
		PprofBindAddress:              opts.PprofAddress,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              opts.LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &lease,
		RenewDeadline:                 &renew,
		RetryPeriod:                   &retry,
		Cache: cache.Options{
			ByObject:         byObject,
			DefaultTransform: cache.TransformStripManagedFields(),
		},
	}
}

// Scheme knows the core types and TFJob.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := kubeflowv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// NewLogger logs at a --log-level (valid: LogLevel says so) in a
// --log-format, json or text.
func NewLogger(level, format string) logr.Logger {
	l, _ := LogLevel(level)
	return zap.New(zap.Level(l), zap.UseDevMode(false), func(o *zap.Options) {
		if format == "text" {
			o.Encoder = zapcore.NewConsoleEncoder(zapcore.EncoderConfig{
				TimeKey: "ts", LevelKey: "level", NameKey: "logger", MessageKey: "msg",
				EncodeTime: zapcore.ISO8601TimeEncoder, EncodeLevel: zapcore.CapitalLevelEncoder,
				EncodeDuration: zapcore.StringDurationEncoder,
			})
		}
	})
}

// RESTConfig loads --kubeconfig, else the usual kubeconfig rules, else the
// in-cluster config.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the cluster config (set --kubeconfig or $KUBECONFIG): %w", err)
	}
	return cfg, nil
}

// LogLevel parses --log-level.
func LogLevel(s string) (zapcore.Level, error) {
	switch s {
	case "error":
		return zapcore.ErrorLevel, nil
	case "info":
		return zapcore.InfoLevel, nil
	case "debug":
		return zapcore.DebugLevel, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("--log-level=%q: must be error, info, debug or a number from 0 up", s)
	}
	return zapcore.Level(-n), nil
}
