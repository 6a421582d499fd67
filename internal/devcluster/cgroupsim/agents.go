package cgroupsim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"sync"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/backfill-dev/backfill/internal/nodeagent"
)

// Node is a simulated node to run an agent on.
type Node struct {
	Name string
	// CPUs is the node's CPU capacity in cores, rounded up to whole CPUs
	// as /proc/stat counts them.
	CPUs float64
	// SystemCPU is what the node's own daemons use, in cores.
	SystemCPU float64
}

// Config is what Start runs.
type Config struct {
	// RESTConfig reaches the cluster's apiserver.
	RESTConfig *rest.Config
	// Dir holds one directory per node, its cgroup tree and /proc; Start
	// empties each first.
	Dir   string
	Nodes []Node
	// OfflinePriorityClass is the manager's --offline-priority-class.
	OfflinePriorityClass string
	// Settings are the agents' (nodeagent.DefaultSettings: the DaemonSet's).
	Settings nodeagent.Settings
	Log      logr.Logger
}

// Agents are the node agents of the simulated nodes, each on its own
// simulated cgroups.
type Agents struct {
	handlers map[string]http.Handler
	cancel   context.CancelFunc
	running  sync.WaitGroup
}

// nodeIndex indexes the pod cache by the node a pod is bound to.
const nodeIndex = "node"

// MetricsPath is where Handler serves the metrics of the agent of node.
func MetricsPath(node string) string { return "/metrics/nodes/" + node + "/metrics" }

// Start lays out every node's cgroups and starts its agent, which ticks
// until Stop once it has listed its node's pods.
func Start(cfg Config) (*Agents, error) {
	if len(cfg.Nodes) == 0 {
		return nil, errors.New("no nodes to run node agents on")
	}
	cs, err := kubernetes.NewForConfig(cfg.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the simulated cgroups' client: %w", err)
	}
	lw := toolscache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "pods", metav1.NamespaceAll, fields.Everything())
	pods := toolscache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, toolscache.Indexers{nodeIndex: func(obj any) ([]string, error) {
		return []string{obj.(*corev1.Pod).Spec.NodeName}, nil
	}})
	synced := func(ctx context.Context) bool { return toolscache.WaitForCacheSync(ctx.Done(), pods.HasSynced) }

	a := &Agents{handlers: map[string]http.Handler{}}
	type started struct {
		cluster *nodeagent.Cluster
		agent   *nodeagent.Agent
		log     logr.Logger
	}
	var all []started
	for _, n := range cfg.Nodes {
		t, err := newTree(filepath.Join(cfg.Dir, n.Name), int(math.Ceil(n.CPUs)))
		if err != nil {
			return nil, fmt.Errorf("laying out the cgroups of node %s: %w", n.Name, err)
		}
		sim := newNode(n.Name, t, n.SystemCPU, cfg.OfflinePriorityClass, podsOn(pods.GetIndexer(), n.Name))
		cluster, err := nodeagent.NewCluster(cfg.RESTConfig, n.Name, cfg.OfflinePriorityClass)
		if err != nil {
			return nil, err
		}
		registry := prometheus.NewRegistry()
		log := cfg.Log.WithValues("node", n.Name)
		agent, err := nodeagent.New(nodeagent.Config{FS: t.fs, Pods: &agentPods{node: sim, cluster: cluster, synced: synced},
			Settings: cfg.Settings, Registry: registry, Log: log})
		if err != nil {
			return nil, fmt.Errorf("starting the node agent of node %s: %w", n.Name, err)
		}
		a.handlers[n.Name] = promhttp.HandlerFor(registry, promhttp.HandlerOpts{})
		all = append(all, started{cluster: cluster, agent: agent, log: log})
	}

	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	go pods.RunWithContext(ctx)
	for _, s := range all {
		a.running.Add(1)
		go s.cluster.Start(ctx)
		go func() {
			defer a.running.Done()
			if err := s.agent.Run(ctx); err != nil {
				s.log.Error(err, "The node agent did not lift its ceilings as it stopped")
			}
		}()
	}
	return a, nil
}

// podsOn lists the pods the cache has bound to node.
func podsOn(index toolscache.Indexer, node string) func() []*corev1.Pod {
	return func() []*corev1.Pod {
		objs, _ := index.ByIndex(nodeIndex, node) // the index exists: no error
		pods := make([]*corev1.Pod, 0, len(objs))
		for _, obj := range objs {
			pods = append(pods, obj.(*corev1.Pod))
		}
		return pods
	}
}

// Handler serves each agent's metrics at MetricsPath(its node), as
// separate targets to scrape, each labelled with its node by the scrape,
// as the chart's PodMonitor labels a real agent's.
func (a *Agents) Handler() http.Handler {
	mux := http.NewServeMux()
	for node, h := range a.handlers {
		mux.Handle(MetricsPath(node), h)
	}
	return mux
}

// Stop ends the agents, each lifting its ceilings as it goes, and waits
// for them.
func (a *Agents) Stop() {
	a.cancel()
	a.running.Wait()
}
