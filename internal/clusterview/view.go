package clusterview

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
)

// boundAndNotTerminated selects the pods the view keeps: bound to a node
// and neither succeeded nor failed. The apiserver filters, so finished
// pods never reach the view.
var boundAndNotTerminated = fields.AndSelectors(
	fields.OneTermNotEqualSelector("spec.nodeName", ""),
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
)

// View holds every node and every bound, non-terminated pod of every
// namespace, each as a summary (Pod, Node). It is apart from the
// manager's cache, which holds only the operator's own pods, and keeps no
// full object.
type View struct {
	pods, nodes toolscache.SharedIndexInformer
	synced      atomic.Bool
}

// New makes a view of the cluster of cfg; Start fills it.
func New(cfg *rest.Config, offlineClass string) (*View, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf // cheaper to decode, and every object is summarised anyway
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the cluster view's client: %w", err)
	}
	rc := cs.CoreV1().RESTClient()
	podsLW := toolscache.NewFilteredListWatchFromClient(rc, "pods", metav1.NamespaceAll, func(o *metav1.ListOptions) {
		o.FieldSelector = boundAndNotTerminated.String()
	})
	v := &View{
		pods:  toolscache.NewSharedIndexInformer(podsLW, &corev1.Pod{}, 0, toolscache.Indexers{}),
		nodes: toolscache.NewSharedIndexInformer(toolscache.NewListWatchFromClient(rc, "nodes", metav1.NamespaceAll, fields.Everything()), &corev1.Node{}, 0, toolscache.Indexers{}),
	}
	if err := v.pods.SetTransform(summarisePod(offlineClass)); err != nil {
		return nil, fmt.Errorf("cluster view: %w", err)
	}
	if err := v.nodes.SetTransform(summariseNode); err != nil {
		return nil, fmt.Errorf("cluster view: %w", err)
	}
	return v, nil
}

// Start fills the view and keeps it current until ctx ends. The manager
// runs it only while it leads, so standbys hold no copy of the cluster's
// pods.
func (v *View) Start(ctx context.Context) error {
	go v.pods.RunWithContext(ctx)
	go v.nodes.RunWithContext(ctx)
	if toolscache.WaitForCacheSync(ctx.Done(), v.pods.HasSynced, v.nodes.HasSynced) {
		v.synced.Store(true)
	}
	<-ctx.Done()
	v.synced.Store(false)
	return nil
}

// Synced reports whether the view holds the whole cluster.
func (v *View) Synced() bool { return v != nil && v.synced.Load() }

// EverySynced runs sync every interval once the view has synced, until
// ctx ends, logging what fails as what: the loop of the manager's periodic
// deciders (reclaim, GPU loans).
func (v *View) EverySynced(ctx context.Context, interval time.Duration, sync func(context.Context) error, log logr.Logger, what string) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !v.Synced() {
			continue
		}
		if err := sync(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, what)
		}
	}
}

// Nodes are the summaries of every node.
func (v *View) Nodes() []*Node { return summaries[Node](v.nodes.GetStore().List()) }

// Pods are the summaries of every bound pod not finished.
func (v *View) Pods() []*Pod { return summaries[Pod](v.pods.GetStore().List()) }

func summaries[T any](objs []any) []*T {
	out := make([]*T, 0, len(objs))
	for _, o := range objs {
		if s, ok := o.(*T); ok {
			out = append(out, s)
		}
	}
	return out
}
