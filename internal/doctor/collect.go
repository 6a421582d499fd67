package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// Scope is what doctor looks at.
type Scope struct {
	// Namespace of the jobs; empty for every namespace.
	Namespace string
	// Job narrows the checks to one TFJob of Namespace; empty for all.
	Job string
	// OfflinePriorityClass is the manager's --offline-priority-class.
	OfflinePriorityClass string
	// LogTail is how many lines of a failing container's log to read.
	LogTail int64
	// MaxLogs bounds the log requests of one run.
	MaxLogs int
}

// ErrJobNotFound says the TFJob the scope names does not exist.
var ErrJobNotFound = errors.New("TFJob not found")

// Collect reads what the checks need: c for objects, cs for discovery and
// logs. Logs are read only for the containers the crash-loop check
// reports.
func Collect(ctx context.Context, c client.Client, cs kubernetes.Interface, scope Scope) (*Snapshot, error) {
	s := &Snapshot{Now: time.Now(), OfflinePriorityClass: scope.OfflinePriorityClass, Logs: map[string]string{}}
	var err error
	if s.TFJobsServed, err = tfJobsServed(cs); err != nil {
		return nil, err
	}
	if s.TFJobsServed {
		if s.Jobs, err = readJobs(ctx, c, scope); err != nil {
			return nil, err
		}
	}
	if err := s.readClusterWide(ctx, c, scope.Namespace); err != nil {
		return nil, err
	}
	if err := s.readNeighbours(ctx, c); err != nil {
		return nil, err
	}
	if err := s.readKueue(ctx, c, scope.Namespace); err != nil {
		return nil, err
	}
	s.KEDA = readKEDA(ctx, c)
	if err := s.readGPUQueries(ctx, c); err != nil {
		return nil, err
	}
	var quotas corev1.ResourceQuotaList
	var ranges corev1.LimitRangeList
	var events corev1.EventList
	inScope := client.InNamespace(scope.Namespace)
	for _, l := range []struct {
		what string
		list client.ObjectList
	}{
		{"resourcequotas", &quotas},
		{"limitranges", &ranges},
		{"events", &events},
	} {
		if err := c.List(ctx, l.list, inScope); err != nil {
			return nil, fmt.Errorf("listing %s: %w", l.what, err)
		}
	}
	s.Quotas, s.LimitRanges, s.Events = quotas.Items, ranges.Items, events.Items
	readLogs(ctx, cs, s, scope)
	return s, nil
}

// readClusterWide lists the leases, pods, nodes and priority classes of
// the whole cluster. A user allowed into one namespace only is refused
// those: the refusal is noted in s.Forbidden (the checks that need them
// are skipped), and pods are read from namespace instead.
func (s *Snapshot) readClusterWide(ctx context.Context, c client.Client, namespace string) error {
	s.Forbidden = map[string]bool{}
	var leases coordinationv1.LeaseList
	var pods corev1.PodList
	var nodes corev1.NodeList
	var classes schedulingv1.PriorityClassList
	for _, l := range []struct {
		what string
		list client.ObjectList
		opts []client.ListOption
	}{
		{readLeases, &leases, []client.ListOption{client.MatchingFields{"metadata.name": ManagerLeaseName}}},
		{readAllPods, &pods, nil},
		{readNodes, &nodes, nil},
		{readPriorityClasses, &classes, nil},
	} {
		err := c.List(ctx, l.list, l.opts...)
		if apierrors.IsForbidden(err) && namespace != "" {
			s.Forbidden[l.what] = true
			continue
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", l.what, err)
		}
	}
	if s.Forbidden[readAllPods] {
		if err := c.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
			return fmt.Errorf("listing the pods of namespace %s: %w", namespace, err)
		}
	}
	s.Leases, s.Pods, s.Nodes, s.PriorityClasses = leases.Items, pods.Items, nodes.Items, classes.Items
	return nil
}

// tfJobsServed asks discovery whether kubeflow.org/v1 serves tfjobs.
func tfJobsServed(cs kubernetes.Interface) (bool, error) {
	resources, err := cs.Discovery().ServerResourcesForGroupVersion(kubeflowv1.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("asking the apiserver which APIs it serves: %w", err)
	}
	return slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == "tfjobs" }), nil
}

func readJobs(ctx context.Context, c client.Client, scope Scope) ([]kubeflowv1.TFJob, error) {
	if scope.Job != "" {
		var job kubeflowv1.TFJob
		err := c.Get(ctx, client.ObjectKey{Namespace: scope.Namespace, Name: scope.Job}, &job)
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: %s/%s", ErrJobNotFound, scope.Namespace, scope.Job)
		}
		if err != nil {
			return nil, fmt.Errorf("reading TFJob %s/%s: %w", scope.Namespace, scope.Job, err)
		}
		return []kubeflowv1.TFJob{job}, nil
	}
	var jobs kubeflowv1.TFJobList
	if err := c.List(ctx, &jobs, client.InNamespace(scope.Namespace)); err != nil {
		return nil, fmt.Errorf("listing TFJobs: %w", err)
	}
	return jobs.Items, nil
}

// readLogs reads the log tails of the containers the crash-loop check
// reports, at most scope.MaxLogs of them: the crashed run's (--previous)
// when the container restarted, else the current one's.
func readLogs(ctx context.Context, cs kubernetes.Interface, s *Snapshot, scope Scope) {
	read := 0
	for i := range s.Jobs {
		for _, p := range s.jobPods(&s.Jobs[i]) {
			for _, c := range p.Status.ContainerStatuses {
				if !NeedsLog(p, c) || read >= scope.MaxLogs {
					continue
				}
				read++
				if log, err := containerLog(ctx, cs, p, c.Name, scope.LogTail, c.RestartCount > 0); err == nil {
					s.Logs[logKey(p.Namespace, p.Name, c.Name)] = log
				}
			}
		}
	}
}

func containerLog(ctx context.Context, cs kubernetes.Interface, p *corev1.Pod, container string, tail int64, previous bool) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	get := func(previous bool) (string, error) {
		data, err := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: container, TailLines: &tail, Previous: previous}).DoRaw(ctx)
		return string(data), err
	}
	if previous {
		if log, err := get(true); err == nil {
			return log, nil
		}
	}
	return get(false)
}
