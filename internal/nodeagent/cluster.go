package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// Cluster is the agent's node as the API server knows it: the pods bound
// to it, from a watch on them alone, and the Eviction API. It is the
// agent's PodSource and Evictor.
type Cluster struct {
	node, offlineClass string
	pods               toolscache.SharedIndexInformer
	client             client.Client
	// synced is closed once the watch has listed the node's pods.
	synced     chan struct{}
	syncedOnce sync.Once
}

// NewCluster watches the pods of node; offlineClass tells offline pods
// apart as the manager does (its --offline-priority-class).
func NewCluster(cfg *rest.Config, node, offlineClass string) (*Cluster, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the node agent's client: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), kubeflowv1.AddToScheme(scheme)); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating the node agent's client: %w", err)
	}
	lw := toolscache.NewFilteredListWatchFromClient(cs.CoreV1().RESTClient(), "pods", metav1.NamespaceAll, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", node).String()
	})
	return &Cluster{node: node, offlineClass: offlineClass, client: c, synced: make(chan struct{}),
		pods: toolscache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, toolscache.Indexers{})}, nil
}

// Start watches the node's pods until ctx ends.
func (c *Cluster) Start(ctx context.Context) {
	go c.pods.RunWithContext(ctx)
	if toolscache.WaitForCacheSync(ctx.Done(), c.pods.HasSynced) {
		c.syncedOnce.Do(func() { close(c.synced) })
	}
}

// Synced reports whether the agent knows its node's pods.
func (c *Cluster) Synced() bool {
	select {
	case <-c.synced:
		return true
	default:
		return false
	}
}

// WaitForSync waits until the agent knows its node's pods, and reports
// whether it does; false when ctx ends first.
func (c *Cluster) WaitForSync(ctx context.Context) bool {
	select {
	case <-c.synced:
		return true
	case <-ctx.Done():
		return false
	}
}

// Pods are the node's pods that run or may still run.
func (c *Cluster) Pods(context.Context) ([]Pod, error) {
	if !c.Synced() {
		return nil, errors.New("the node's pods are not listed yet")
	}
	var out []Pod
	for _, obj := range c.pods.GetStore().List() {
		pod := obj.(*corev1.Pod)
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		out = append(out, podOf(pod, c.offlineClass))
	}
	return out, nil
}

// podOf is what the agent knows of pod.
func podOf(pod *corev1.Pod, offlineClass string) Pod {
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	batch := colocation.BatchOf(requests)
	p := Pod{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, QOS: pod.Status.QOSClass,
		Reclaimed: colocation.PodTier(pod, offlineClass) == colocation.TierOffline && !batch.IsZero(),
		Limits:    kubeletQuotas(pod), Resize: resizeOf(pod)}
	p.Weight = limitMilli(p.Limits.Pod)
	if p.Weight == 0 {
		p.Weight = max(batch.MilliCPU, 1)
	}
	return p
}

// kubeletQuotas are the CPU quotas the kubelet gives a pod and its
// containers: each container's limit, and the pod's their sum when every
// container has one (else none).
func kubeletQuotas(pod *corev1.Pod) nodefs.Limits {
	l := nodefs.Limits{Pod: 0, Containers: map[string]int64{}}
	limits := map[string]int64{}
	for _, c := range pod.Spec.Containers {
		q, ok := c.Resources.Limits[corev1.ResourceCPU]
		if !ok || q.IsZero() {
			l.Pod = -1
			limits[c.Name] = -1
			continue
		}
		quota := q.MilliValue() * cfsPeriod / 1000
		limits[c.Name] = quota
		if l.Pod >= 0 {
			l.Pod += quota
		}
	}
	for _, s := range pod.Status.ContainerStatuses {
		if _, id, ok := strings.Cut(s.ContainerID, "://"); ok {
			l.Containers[id] = limits[s.Name]
		}
	}
	if len(pod.Spec.Containers) == 0 {
		l.Pod = -1
	}
	return l
}

// Rank is the node's reclaimed pods ranked as the manager ranks them: for
// each TFJob with a pod here, every pod of the job (a job is one unit of
// work lost) and its last checkpoint.
func (c *Cluster) Rank(ctx context.Context) ([]reclaim.Pod, error) {
	var summaries []*clusterview.Pod
	jobs := map[client.ObjectKey]bool{}
	for _, obj := range c.pods.GetStore().List() {
		s := clusterview.PodSummary(obj.(*corev1.Pod), c.offlineClass)
		if s.TFJob != "" {
			jobs[client.ObjectKey{Namespace: s.Namespace, Name: s.TFJob}] = true
			continue // listed with its job below
		}
		summaries = append(summaries, s)
	}
	checkpoints := map[string]time.Time{}
	for key := range jobs {
		pods, ckpt, err := c.job(ctx, key)
		if err != nil {
			return nil, err
		}
		summaries = append(summaries, pods...)
		if !ckpt.IsZero() {
			checkpoints[key.String()] = ckpt
		}
	}
	ranked := reclaim.PodsByNode(summaries, checkpoints)[c.node]
	for i, s := range ranked {
		// A pod under the manager's stop notice still holds its memory:
		// a candidate whose job's work is lost anyway.
		if s.Terminating && !c.deleted(s.UID) {
			ranked[i].Terminating = false
		}
	}
	return ranked, nil
}

// job is every pod of a TFJob, summarised, and its last checkpoint.
func (c *Cluster) job(ctx context.Context, key client.ObjectKey) ([]*clusterview.Pod, time.Time, error) {
	var pods corev1.PodList
	if err := c.client.List(ctx, &pods, client.InNamespace(key.Namespace), client.MatchingLabels{kubeflowv1.JobNameLabel: key.Name}); err != nil {
		return nil, time.Time{}, fmt.Errorf("listing the pods of TFJob %s: %w", key, err)
	}
	var out []*clusterview.Pod
	for i := range pods.Items {
		out = append(out, clusterview.PodSummary(&pods.Items[i], c.offlineClass))
	}
	var job kubeflowv1.TFJob
	if err := c.client.Get(ctx, key, &job); err != nil {
		return out, time.Time{}, client.IgnoreNotFound(err)
	}
	if p := job.Status.Progress; p != nil && p.CheckpointTime != nil {
		return out, p.CheckpointTime.Time, nil
	}
	return out, time.Time{}, nil
}

// deleted reports whether the pod of uid is being deleted.
func (c *Cluster) deleted(uid string) bool {
	for _, obj := range c.pods.GetStore().List() {
		if pod := obj.(*corev1.Pod); string(pod.UID) == uid {
			return pod.DeletionTimestamp != nil
		}
	}
	return true
}

// Evict gives the pod the stop notice of a reclaim for online pods, due
// now, so that its TFJob counts a disruption rather than a failure, and
// evicts it. As the manager does, it asks first whether the Eviction API
// would (a PodDisruptionBudget may refuse), and takes the notice off again
// if the eviction is refused after all. A notice the cluster forbids does
// not hold the eviction back.
func (c *Cluster) Evict(ctx context.Context, p reclaim.Pod) error {
	if err := reclaim.Evict(ctx, c.client, p.Namespace, p.Name, p.UID, true); err != nil {
		return err
	}
	now := time.Now()
	noticed := reclaim.Notify(ctx, c.client, p.Namespace, p.Name, p.UID, &now)
	// Memory does not wait for a notice the cluster forbids (a token not
	// bound to this node): the eviction still counts as a disruption.
	if noticed != nil && !apierrors.IsForbidden(noticed) {
		return noticed
	}
	err := reclaim.Evict(ctx, c.client, p.Namespace, p.Name, p.UID, false)
	if apierrors.IsTooManyRequests(err) && noticed == nil {
		return errors.Join(err, client.IgnoreNotFound(reclaim.Notify(ctx, c.client, p.Namespace, p.Name, p.UID, nil)))
	}
	return err
}
