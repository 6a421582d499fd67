package cgroupsim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/internal/nodeagent"
)

// node is one simulated node's kernel: its cgroup tree, kept to the pods
// running there, and the counters it has moved so far.
type node struct {
	name string
	// capacity and system are the node's CPUs and what its own daemons
	// use, in cores.
	capacity, system float64
	offlineClass     string
	tree             *tree
	// pods are the pods bound to the node, as the cluster's cache has them.
	pods func() []*corev1.Pod

	mu       sync.Mutex
	last     time.Time
	groups   map[types.UID]*podGroup
	kubepods counters
	// busy and idle are the node's CPU time, summed over its CPUs.
	busy, idle time.Duration
}

// podGroup is a running pod's cgroup.
type podGroup struct {
	group     string
	reclaimed bool
	counters
}

func newNode(name string, t *tree, system float64, offlineClass string, pods func() []*corev1.Pod) *node {
	return &node{name: name, capacity: float64(t.cpus), system: system, offlineClass: offlineClass, tree: t, pods: pods,
		groups: map[types.UID]*podGroup{}}
}

// advance brings the node's cgroups to now: a cgroup for each pod that
// runs there and that the agent lists, none for the pods that no longer
// run, and every counter moved by what the pods used, were throttled and
// waited since the last advance, by step, under the cpu.max and cpu.idle
// the agent has written. A cgroup made now counts from the next advance,
// as a pod's cgroup is made before its containers run: the agent's first
// reading of it is zero, and so none of its use passes for online use.
func (n *node) advance(now time.Time, listed map[types.UID]bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	running := map[types.UID]*corev1.Pod{}
	for _, p := range n.pods() {
		if p.Spec.NodeName == n.name && p.Status.Phase == corev1.PodRunning {
			running[p.UID] = p
		}
	}
	made, err := n.follow(running, listed)
	errs := []error{err}
	dt := now.Sub(n.last)
	if n.last.IsZero() || dt <= 0 {
		n.last = now
		return errors.Join(errs...)
	}
	n.last = now

	var asks []podCPU
	var groups []*podGroup
	for uid, g := range n.groups {
		if made[uid] {
			continue
		}
		quota, err := n.tree.quota(g.group)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		idle, err := n.tree.idle(g.group)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		asks = append(asks, podCPU{demand: podUse(running[uid]), reclaimed: g.reclaimed, quota: quota, idle: idle})
		groups = append(groups, g)
	}
	steps, _ := step(n.capacity, n.system, asks)
	used := 0.0
	for i, s := range steps {
		groups[i].count(s, asks[i].quota >= 0, dt)
		used += s.used
		errs = append(errs, n.tree.writeCounters(groups[i].group, &groups[i].counters))
	}
	n.kubepods.usage += over(used, dt)
	errs = append(errs, n.tree.writeCounters("", &n.kubepods))
	busy := min(used+n.system, n.capacity)
	n.busy += over(busy, dt)
	n.idle += over(n.capacity-busy, dt)
	errs = append(errs, n.tree.writeProcStat(n.busy, n.idle))
	return errors.Join(errs...)
}

// follow makes a cgroup for each running pod the agent lists that has
// none, and takes away the cgroups of the pods that no longer run. It
// returns the pods whose cgroups it made.
func (n *node) follow(running map[types.UID]*corev1.Pod, listed map[types.UID]bool) (map[types.UID]bool, error) {
	var errs []error
	for uid, g := range n.groups {
		if running[uid] == nil {
			errs = append(errs, n.tree.removePod(g.group))
			delete(n.groups, uid)
		}
	}
	made := map[types.UID]bool{}
	for uid, p := range running {
		if n.groups[uid] != nil || !listed[uid] {
			continue
		}
		g := &podGroup{group: n.tree.fs.PodGroup(p.Status.QOSClass, uid), reclaimed: reclaimed(p, n.offlineClass)}
		if err := n.tree.addPod(g.group, p); err != nil {
			errs = append(errs, fmt.Errorf("making the cgroup of pod %s/%s: %w", p.Namespace, p.Name, err))
			continue
		}
		n.groups[uid] = g
		made[uid] = true
	}
	return made, errors.Join(errs...)
}

// count adds a step of dt to a cgroup's counters; limited: it has a quota,
// so each CFS period counts.
func (c *counters) count(s podStep, limited bool, dt time.Duration) {
	c.usage += over(s.used, dt)
	c.throttled += over(s.throttled, dt)
	c.waited += over(s.wait, dt)
	c.decay(s.wait, dt)
	if limited {
		periods := float64(dt) / float64(cfsPeriod*time.Microsecond)
		c.periods += periods
		if s.throttled > 0 {
			c.throttledPeriods += periods
		}
	}
}

// over is rate (per second) sustained over dt, to the nanosecond.
func over(rate float64, dt time.Duration) time.Duration {
	return time.Duration(math.Round(rate * float64(dt)))
}

// podUse is the CPU a pod asks for, in cores: its kwok usage annotation,
// which kwok gives each of its containers; 0 without a valid one.
func podUse(p *corev1.Pod) float64 {
	q, err := resource.ParseQuantity(p.Annotations[kwok.UsageCPUAnnotation])
	if err != nil || q.Sign() < 0 {
		return 0
	}
	return float64(q.MilliValue()) / 1000 * float64(len(p.Spec.Containers))
}

// reclaimed reports whether a pod is an offline pod on reclaimed
// capacity, as the node agent tells them apart.
func reclaimed(p *corev1.Pod, offlineClass string) bool {
	requests := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	return colocation.PodTier(p, offlineClass) == colocation.TierOffline && !colocation.BatchOf(requests).IsZero()
}

// agentPods is the pod source of the agent of a simulated node: the
// node's pods as the agent lists them from the apiserver, each listing
// then bringing the simulated kernel to the moment the agent reads it, as
// a real kernel's counters are always current.
type agentPods struct {
	node    *node
	cluster nodeagent.SyncedPodSource
	// synced reports whether the simulation's own cache of pods is.
	synced func(ctx context.Context) bool
}

func (p *agentPods) Pods(ctx context.Context) ([]nodeagent.Pod, error) {
	pods, err := p.cluster.Pods(ctx)
	if err != nil {
		return nil, err
	}
	listed := make(map[types.UID]bool, len(pods))
	for _, pod := range pods {
		listed[pod.UID] = true
	}
	if err := p.node.advance(time.Now(), listed); err != nil {
		return nil, fmt.Errorf("simulating the cgroups of node %s: %w", p.node.name, err)
	}
	return pods, nil
}

func (p *agentPods) WaitForSync(ctx context.Context) bool {
	return p.synced(ctx) && p.cluster.WaitForSync(ctx)
}
