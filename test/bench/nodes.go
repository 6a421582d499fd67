package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/test/framework"
)

// The benchmark's node: 96 CPUs and 384 GiB, of which the kubelet keeps 1
// CPU and 3 GiB for the system, as kubelets commonly reserve. Big enough
// that the scale run's 14 training pods a node (28 CPUs, 56 GiB) fit in
// what its online pods leave idle.
var (
	nodeCPU               = resource.MustParse("96")
	nodeMemory            = resource.MustParse("384Gi")
	nodeAllocatableCPU    = resource.MustParse("95")
	nodeAllocatableMemory = resource.MustParse("381Gi")
)

// nodeConcurrency is how many node requests the harness sends at once.
const nodeConcurrency = 32

// createNodes starts kwok (bin/kwok) on the cluster and creates n nodes it
// manages, named node-0000, node-0001, ...: kwok makes them Ready, renews
// their Leases and turns the pods bound to them Running, as kubelets
// would. Once they are Ready the harness lowers their allocatable below
// capacity (kwok's start-up makes the two equal). leaseSeconds is the
// duration of the nodes' Leases, renewed every quarter of it (0: 40, the
// kubelet's default). stop stops kwok; the nodes stay.
func createNodes(ctx context.Context, c *cluster, n, leaseSeconds int) (names []string, stop func() error, err error) {
	kubeconfig, err := c.kubeconfig("kwok")
	if err != nil {
		return nil, nil, err
	}
	sim, err := simkwok.Start(simkwok.Options{
		Binary:     filepath.Join(framework.BinDir(), "kwok"),
		Kubeconfig: kubeconfig,
		StateDir:   filepath.Join(c.dir, "kwok"),

		NodeLeaseDurationSeconds: leaseSeconds,
	})
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			_ = sim.Stop()
		}
	}()
	names = make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("node-%04d", i)
	}
	err = forEach(ctx, names, nodeConcurrency, func(ctx context.Context, name string) error {
		node := simkwok.NodeObject(simkwok.NodeSpec{Name: name, CPU: nodeCPU, Memory: nodeMemory})
		if _, err := c.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if err := waitNodesReady(ctx, c, n); err != nil {
		return nil, nil, fmt.Errorf("%w; see %s", err, sim.LogPath())
	}
	if err := forEach(ctx, names, nodeConcurrency, func(ctx context.Context, name string) error {
		return reserveForSystem(ctx, c, name)
	}); err != nil {
		return nil, nil, err
	}
	return names, sim.Stop, nil
}

// waitNodesReady waits until n nodes are Ready.
func waitNodesReady(ctx context.Context, c *cluster, n int) error {
	ready := 0
	err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready = 0
		for _, node := range list.Items {
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready >= n, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d nodes to be Ready (%d are): %w", n, ready, err)
	}
	return nil
}

// reserveForSystem sets a node's allocatable cpu and memory below its
// capacity, by a merge patch of its status that leaves the rest alone.
func reserveForSystem(ctx context.Context, c *cluster, name string) error {
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"allocatable": corev1.ResourceList{
		corev1.ResourceCPU: nodeAllocatableCPU, corev1.ResourceMemory: nodeAllocatableMemory,
	}}})
	if err != nil {
		return err
	}
	if _, err := c.kube.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("setting the allocatable of node %s: %w", name, err)
	}
	return nil
}

// bindPods binds pods[i] of a namespace to nodes[i % len(nodes)] through
// the pods/binding subresource, as a scheduler would (there is none), up
// to concurrency at once, and returns once every one of them is Running:
// kwok starts the pods on its nodes.
func bindPods(ctx context.Context, c *cluster, namespace string, pods []string, nodes []string, concurrency int) error {
	if len(nodes) == 0 {
		return fmt.Errorf("binding %d pods: no nodes", len(pods))
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	running, err := c.watchRunning(wctx, namespace, pods)
	if err != nil {
		return err
	}
	index := make(map[string]int, len(pods))
	for i, p := range pods {
		index[p] = i
	}
	err = forEach(ctx, pods, concurrency, func(ctx context.Context, pod string) error {
		b := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: pod},
			Target:     corev1.ObjectReference{Kind: "Node", Name: nodes[index[pod]%len(nodes)]},
		}
		if err := c.kube.CoreV1().Pods(namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("binding pod %s: %w", pod, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return running.wait(ctx, 5*time.Minute)
}

// runningPods follows which of some pods are Running.
type runningPods struct {
	mu      sync.Mutex
	want    map[string]bool
	running map[string]bool
	err     error
}

// watchRunning watches the pods of a namespace from now on and records
// which of names run.
func (c *cluster) watchRunning(ctx context.Context, namespace string, names []string) (*runningPods, error) {
	pods := c.kube.CoreV1().Pods(namespace)
	list, err := pods.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	r := &runningPods{want: make(map[string]bool, len(names)), running: map[string]bool{}}
	for _, n := range names {
		r.want[n] = true
	}
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return pods.Watch(ctx, opts)
	}}
	err = runWatch(ctx, list.ResourceVersion, lw, func(e watch.Event) {
		pod, ok := e.Object.(*corev1.Pod)
		if !ok || !r.want[pod.Name] {
			return
		}
		r.mu.Lock()
		r.running[pod.Name] = pod.Status.Phase == corev1.PodRunning && e.Type != watch.Deleted
		r.mu.Unlock()
	}, func(err error) {
		r.mu.Lock()
		r.err = err
		r.mu.Unlock()
	})
	return r, err
}

// count is how many of the pods run now.
func (r *runningPods) count() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, running := range r.running {
		if running {
			n++
		}
	}
	return n, r.err
}

// wait waits until every pod runs.
func (r *runningPods) wait(ctx context.Context, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		n, err := r.count()
		return n == len(r.want), err
	})
	if err != nil {
		n, _ := r.count()
		return fmt.Errorf("waiting for %d pods to run (%d do): %w", len(r.want), n, err)
	}
	return nil
}
