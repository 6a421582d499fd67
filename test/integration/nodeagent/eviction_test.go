//go:build integration

package nodeagent

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/nodeagent"
	"github.com/backfill-dev/backfill/internal/reclaim"
	"github.com/backfill-dev/backfill/test/framework"
)

// memoryScene is a node with the pods of two training jobs, one that
// saved a checkpoint a minute ago and one that never did, running for an
// hour, an offline pod of no job running for three, and an online pod, web,
// using 30Gi; and an agent that lists them all.
type memoryScene struct {
	node                                *fakeNode
	agent                               *agentOn
	savedPod, unsavedPod, notebook, web *corev1.Pod
}

// newMemoryScene makes the scene with each offline pod using offlineUse
// bytes of memory.
func newMemoryScene(t *testing.T, offlineUse int64) memoryScene {
	ns := newNamespace(t)
	sc := memoryScene{node: newFakeNode(t, "node-"+ns)}
	now := time.Now()
	saved, unsaved := createJob(t, ns, "saved", now.Add(-time.Minute)), createJob(t, ns, "unsaved", time.Time{})
	sc.savedPod = jobPod(t, saved, sc.node.name, now.Add(-time.Hour))
	sc.unsavedPod = jobPod(t, unsaved, sc.node.name, now.Add(-time.Hour))
	sc.notebook = offlinePod(t, ns, "notebook", sc.node.name, now.Add(-3*time.Hour))
	sc.web = onlinePod(t, ns, "web", sc.node.name, now.Add(-24*time.Hour))
	for _, p := range []*corev1.Pod{sc.savedPod, sc.unsavedPod, sc.notebook} {
		sc.node.addPod(t, p, offlineUse)
	}
	sc.node.addPod(t, sc.web, 30*gi)
	sc.agent = startAgent(t, sc.node, apiServer.Env.Config)
	sc.agent.waitListed(t, sc.savedPod, sc.unsavedPod, sc.notebook, sc.web)
	return sc
}

// TestMemoryEviction: above the memory threshold the agent evicts the
// offline pod whose job loses least work (the job that checkpointed a
// minute ago, before one that never did and an offline pod of no job
// running for hours), only as many as cover the need, through the
// Eviction API with the stop notice written first, and never the online
// pod. While its victim terminates, neither it nor a restarted agent
// evicts again for the same shortage; a larger one takes the next.
func TestMemoryEviction(t *testing.T) {
	sc := newMemoryScene(t, 6*gi)
	node, agent := sc.node, sc.agent
	savedPod, unsavedPod, notebook, web := sc.savedPod, sc.unsavedPod, sc.notebook, sc.web
	histories := map[*corev1.Pod]*history{}
	for _, p := range []*corev1.Pod{savedPod, unsavedPod, notebook, web} {
		histories[p] = watchPod(t, p)
	}

	// Below the threshold: nothing.
	agent.tick(t)
	wantRunning(t, savedPod, unsavedPod, notebook, web)

	// 93% in use: 5 points above 88%, 3.2Gi, which one pod's 6Gi covers.
	node.setMemoryUsed(t, 93)
	agent.tick(t)
	wantEvicted(t, savedPod, histories[savedPod])
	wantRunning(t, unsavedPod, notebook, web)
	wantCount(t, agent, nodeagent.EvictionEvicted, 1)

	// Still 93%, the victim terminating: released, as the agent counts it
	// at once and as its watch shows it once the apiserver's deletion
	// reaches it.
	agent.tick(t)
	framework.Eventually(t, "the agent's watch to show the victim terminating", func(ctx context.Context) (bool, error) {
		ranked, err := agent.cluster.Rank(ctx)
		if err != nil {
			return false, err
		}
		i := slices.IndexFunc(ranked, func(p reclaim.Pod) bool { return p.UID == string(savedPod.UID) })
		return i >= 0 && ranked[i].Terminating, nil
	})
	agent.tick(t)
	restarted := newAgent(t, node, agent.cluster)
	restarted.tick(t)
	wantRunning(t, unsavedPod, notebook, web)
	wantCount(t, agent, nodeagent.EvictionEvicted, 1)
	wantCount(t, restarted, nodeagent.EvictionEvicted, 0)

	// 99%: 11 points, 7.04Gi, of which the victim releases 6Gi; the rest
	// takes the next least work lost: the job's hour before the
	// notebook's three.
	node.setMemoryUsed(t, 99)
	agent.tick(t)
	wantEvicted(t, unsavedPod, histories[unsavedPod])
	wantRunning(t, notebook, web)
	wantCount(t, agent, nodeagent.EvictionEvicted, 2)
	wantNeverStopped(t, "online pod web", histories[web])
	wantNeverStopped(t, "offline pod notebook", histories[notebook])
}

// TestMemoryEvictionSecondVictim: when the pod whose job loses least work
// does not cover the need alone, the next one goes too, in the same tick.
func TestMemoryEvictionSecondVictim(t *testing.T) {
	sc := newMemoryScene(t, 3*gi)
	node, agent := sc.node, sc.agent
	savedPod, unsavedPod, notebook, web := sc.savedPod, sc.unsavedPod, sc.notebook, sc.web
	savedHistory, unsavedHistory, webHistory := watchPod(t, savedPod), watchPod(t, unsavedPod), watchPod(t, web)

	// 93%: 3.2Gi to release, more than either job's 3Gi.
	node.setMemoryUsed(t, 93)
	agent.tick(t)
	wantEvicted(t, savedPod, savedHistory)
	wantEvicted(t, unsavedPod, unsavedHistory)
	wantRunning(t, notebook, web)
	wantCount(t, agent, nodeagent.EvictionEvicted, 2)
	wantNeverStopped(t, "online pod web", webHistory)
}

// TestMemoryEvictionRefusedByBudget: a PodDisruptionBudget that refuses
// keeps its pod running, without a stop notice: none is written when the
// Eviction API's dry run refuses already, and the one written is taken off
// again when the budget is spent between the dry run and the eviction.
func TestMemoryEvictionRefusedByBudget(t *testing.T) {
	for _, tc := range []struct {
		name string
		// allowed is what the budget allows at the dry run; spent: none
		// by the eviction.
		allowed int32
		spent   bool
	}{
		{name: "refused by the dry run", allowed: 0},
		{name: "refused after the notice", allowed: 1, spent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			node := newFakeNode(t, "node-"+ns)
			now := time.Now()
			job := createJob(t, ns, "guarded", time.Time{})
			pod := jobPod(t, job, node.name, now.Add(-time.Hour))
			web := onlinePod(t, ns, "web", node.name, now.Add(-24*time.Hour))
			node.addPod(t, pod, 6*gi)
			node.addPod(t, web, 30*gi)
			pdb := createBudget(t, job, tc.allowed)
			cfg := apiServer.Env.Config
			if tc.spent {
				cfg = budgetSpender(t, func() error { return setBudget(context.Background(), pdb, 0) })
			}
			agent := startAgent(t, node, cfg)
			agent.waitListed(t, pod, web)
			podHistory, webHistory := watchPod(t, pod), watchPod(t, web)

			node.setMemoryUsed(t, 93)
			agent.tick(t)
			wantRunning(t, pod, web)
			wantCount(t, agent, nodeagent.EvictionRefused, 1)
			wantCount(t, agent, nodeagent.EvictionEvicted, 0)
			if tc.spent {
				framework.Eventually(t, "the watch to show the notice written and taken off", func(context.Context) (bool, error) {
					states := podHistory.snapshot()
					i := slices.IndexFunc(states, func(s podState) bool { return s.noticed })
					return i >= 0 && slices.ContainsFunc(states[i:], func(s podState) bool { return !s.noticed }), nil
				})
			} else {
				wantNeverStopped(t, "the guarded pod", podHistory)
			}
			wantNeverStopped(t, "online pod web", webHistory)
		})
	}
}

// wantEvicted checks that pod is being deleted (or gone), and that the
// stop notice was on it before: its TFJob counts a disruption for online
// pods, not a failure.
func wantEvicted(t *testing.T, pod *corev1.Pod, h *history) {
	t.Helper()
	if state, gone := current(t, pod); !gone && !state.deleting {
		t.Fatalf("pod %s is not evicted: %+v", pod.Name, state)
	}
	framework.Eventually(t, "the watch to show "+pod.Name+" evicted", func(context.Context) (bool, error) {
		return slices.ContainsFunc(h.snapshot(), func(s podState) bool { return s.deleting }), nil
	})
	states := h.snapshot()
	deleted := slices.IndexFunc(states, func(s podState) bool { return s.deleting })
	if !states[deleted].noticed {
		t.Errorf("pod %s was evicted without the stop notice: versions %+v", pod.Name, states)
	}
	if !slices.ContainsFunc(states[:deleted], func(s podState) bool { return s.noticed }) {
		t.Errorf("pod %s: the notice was not written before the eviction: versions %+v", pod.Name, states)
	}
}

// wantRunning checks that pods are neither evicted nor under notice.
func wantRunning(t *testing.T, pods ...*corev1.Pod) {
	t.Helper()
	for _, pod := range pods {
		if state, gone := current(t, pod); gone || state.deleting || state.noticed {
			t.Errorf("pod %s: gone %v, %+v; want it running without a stop notice", pod.Name, gone, state)
		}
	}
}

// wantNeverStopped checks that no version of a pod had a notice or a
// deletion.
func wantNeverStopped(t *testing.T, what string, h *history) {
	t.Helper()
	if states := h.snapshot(); slices.ContainsFunc(states, func(s podState) bool { return s.noticed || s.deleting }) {
		t.Errorf("%s was given notice or evicted: versions %+v", what, states)
	}
}

func wantCount(t *testing.T, a *agentOn, result string, want float64) {
	t.Helper()
	if got := a.evictions(t, result); got != want {
		t.Errorf("backfill_node_agent_memory_evictions_total{result=%q} = %v, want %v", result, got, want)
	}
}
