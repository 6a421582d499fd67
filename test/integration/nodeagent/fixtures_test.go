//go:build integration

package nodeagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/nodeagent"
	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
	"github.com/backfill-dev/backfill/test/framework"
)

const (
	gi = int64(1) << 30
	// memTotal is every fake node's memory.
	memTotal = 64 * gi
	// memoryThreshold is the agent's: it evicts until use is 2 points below.
	memoryThreshold = 90
)

var seq atomic.Int64

// newNamespace creates a namespace for one test; no namespace controller
// runs, so it stays until the suite ends.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("node-agent-%d", seq.Add(1))
	if err := apiServer.CreateNamespace(context.Background(), name); err != nil {
		t.Fatalf("Creating namespace %s: %v", name, err)
	}
	return name
}

// fakeNode is a node's cgroup v1 tree (cgroupfs driver, the kubelet's
// --cgroup-root "/") and /proc in a temporary directory, holding what
// nodefs reads.
type fakeNode struct {
	name string
	fs   *nodefs.FS
}

// newFakeNode makes a node of 2 CPUs and memTotal, its kubepods and QoS
// cgroups made, found by nodefs.Detect as the agent finds a real one.
func newFakeNode(t *testing.T, name string) *fakeNode {
	t.Helper()
	dir := t.TempDir()
	root, proc := filepath.Join(dir, "cgroup"), filepath.Join(dir, "proc")
	writeFiles(t, proc, map[string]string{
		"stat": "cpu  1000 0 500 20000 100 0 0 0 0 0\ncpu0 500 0 250 10000 50 0 0 0 0 0\ncpu1 500 0 250 10000 50 0 0 0 0 0\n",
	})
	n := &fakeNode{name: name, fs: &nodefs.FS{Root: root, Version: nodefs.V1, Driver: nodefs.Cgroupfs, ProcRoot: proc}}
	for _, group := range []string{"", "burstable", "besteffort"} {
		n.addGroup(t, group, 0)
	}
	detected, err := nodefs.Detect(root, "/", proc)
	if err != nil {
		t.Fatalf("Detect on the fake node: %v", err)
	}
	if detected.Version != nodefs.V1 || detected.Driver != nodefs.Cgroupfs {
		t.Fatalf("Detect on the fake node = v%d %s, want v1 cgroupfs", detected.Version, detected.Driver)
	}
	n.fs = detected
	n.setMemoryUsed(t, 50)
	return n
}

// addGroup makes group below kubepods in the cpu, cpuacct and memory
// hierarchies, with a working set of ws bytes (the kernel's usage, less
// 1Gi of inactive page cache).
func (n *fakeNode) addGroup(t *testing.T, group string, ws int64) {
	t.Helper()
	at := func(controller string) string { return filepath.Join(n.fs.Root, controller, "kubepods", group) }
	writeFiles(t, at("cpu"), map[string]string{
		"cpu.cfs_quota_us": "-1", "cpu.cfs_period_us": "100000", "cpu.shares": "2", "tasks": "",
		"cpu.stat": "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n",
	})
	writeFiles(t, at("cpuacct"), map[string]string{"cpuacct.usage": "0"})
	writeFiles(t, at("memory"), map[string]string{
		"memory.usage_in_bytes": strconv.FormatInt(ws+gi, 10),
		"memory.stat":           fmt.Sprintf("cache %d\nrss %d\ninactive_file %d\ntotal_inactive_file %d\n", gi, ws, gi, gi),
	})
}

// addPod makes a pod's cgroup, as the kubelet names it from its QoS class
// and UID, with a working set of ws bytes.
func (n *fakeNode) addPod(t *testing.T, pod *corev1.Pod, ws int64) {
	t.Helper()
	if pod.Status.QOSClass == "" {
		t.Fatalf("pod %s has no QoS class yet", pod.Name)
	}
	n.addGroup(t, n.fs.PodGroup(pod.Status.QOSClass, pod.UID), ws)
}

// setMemoryUsed sets the node's memory in use to percent of memTotal.
func (n *fakeNode) setMemoryUsed(t *testing.T, percent int64) {
	t.Helper()
	kb := func(b int64) string { return strconv.FormatInt(b/1024, 10) + " kB" }
	available := memTotal * (100 - percent) / 100
	writeFiles(t, n.fs.ProcRoot, map[string]string{"meminfo": fmt.Sprintf(
		"MemTotal:       %s\nMemFree:        %s\nMemAvailable:   %s\nBuffers:        0 kB\nCached:         %s\n",
		kb(memTotal), kb(available/2), kb(available), kb(available/2))})
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// agentOn is a node agent for node, watching its pods through cfg (the
// apiserver's, or a proxy's), with its metrics on a registry of its own.
type agentOn struct {
	*nodeagent.Agent
	cluster  *nodeagent.Cluster
	registry *prometheus.Registry
}

func startAgent(t *testing.T, n *fakeNode, cfg *rest.Config) *agentOn {
	t.Helper()
	cluster, err := nodeagent.NewCluster(cfg, n.name, colocation.DefaultOfflinePriorityClass)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go cluster.Start(ctx)
	framework.Eventually(t, "the agent to list its node's pods", func(context.Context) (bool, error) { return cluster.Synced(), nil })
	return newAgent(t, n, cluster)
}

// newAgent is a new agent, with no memory of evictions, on a cluster
// already watched.
func newAgent(t *testing.T, n *fakeNode, cluster *nodeagent.Cluster) *agentOn {
	t.Helper()
	settings := nodeagent.DefaultSettings()
	settings.MemoryThreshold = memoryThreshold
	registry := prometheus.NewRegistry()
	agent, err := nodeagent.New(nodeagent.Config{FS: n.fs, Pods: cluster, Evictor: cluster, Settings: settings, Registry: registry, Log: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	return &agentOn{Agent: agent, cluster: cluster, registry: registry}
}

// tick runs one tick, which must not fail.
func (a *agentOn) tick(t *testing.T) {
	t.Helper()
	if err := a.Tick(context.Background()); err != nil {
		t.Fatalf("Tick: %v", err)
	}
}

// evictions is backfill_node_agent_memory_evictions_total{result}.
func (a *agentOn) evictions(t *testing.T, result string) float64 {
	t.Helper()
	families, err := a.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "backfill_node_agent_memory_evictions_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("backfill_node_agent_memory_evictions_total{result=%q} is not exported", result)
	return 0
}

// waitListed waits until the agent's watch shows every pod of pods
// running, as the test wrote their status.
func (a *agentOn) waitListed(t *testing.T, pods ...*corev1.Pod) {
	t.Helper()
	framework.Eventually(t, "the agent to see its node's pods running", func(ctx context.Context) (bool, error) {
		listed, err := a.cluster.Pods(ctx)
		if err != nil {
			return false, nil
		}
		seen := map[string]bool{}
		for _, p := range listed {
			seen[string(p.UID)] = true
		}
		for _, p := range pods {
			if !seen[string(p.UID)] {
				return false, nil
			}
		}
		return true, nil
	})
}

// createJob creates a TFJob of one worker; with checkpoint set, its
// training code reported a checkpoint then. No operator runs: the test
// makes the job's pod itself.
func createJob(t *testing.T, ns, name string, checkpoint time.Time) *kubeflowv1.TFJob {
	t.Helper()
	ctx := context.Background()
	job := &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.ReplicaTypeWorker: {
				Replicas:      ptr.To[int32](1),
				RestartPolicy: kubeflowv1.RestartPolicyOnFailure,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: kubeflowv1.ContainerName, Image: "registry.invalid/train:never-pulled"}},
				}},
			},
		}},
	}
	if err := apiServer.Client.Create(ctx, job); err != nil {
		t.Fatalf("Creating TFJob %s: %v", name, err)
	}
	if checkpoint.IsZero() {
		return job
	}
	at := metav1.NewTime(checkpoint)
	job.Status.Progress = &kubeflowv1.Progress{Step: 500, ReportTime: at, CheckpointStep: ptr.To[int64](500), CheckpointTime: &at}
	if err := apiServer.Client.Status().Update(ctx, job); err != nil {
		t.Fatalf("Reporting a checkpoint of TFJob %s: %v", name, err)
	}
	return job
}

// batch are the reclaimed resources an offline pod asks for.
var batch = corev1.ResourceList{
	colocation.ResourceBatchCPU:    resource.MustParse("2000"),
	colocation.ResourceBatchMemory: resource.MustParse("8Gi"),
}

// jobPod is the worker of job on node, on reclaimed capacity (BestEffort:
// it asks for no cpu or memory), running since started.
func jobPod(t *testing.T, job *kubeflowv1.TFJob, node string, started time.Time) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: job.Namespace, Name: job.Name + "-worker-0",
			Labels: map[string]string{kubeflowv1.JobNameLabel: job.Name, kubeflowv1.ReplicaTypeLabel: "worker"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.Kind,
				Name: job.Name, UID: job.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: kubeflowv1.ContainerName, Image: "registry.invalid/train:never-pulled",
				Resources: corev1.ResourceRequirements{Requests: batch, Limits: batch}}},
		},
	}
	return createRunning(t, pod, started)
}

// offlinePod is an offline pod of no TFJob, of the offline class, on
// reclaimed capacity on node.
func offlinePod(t *testing.T, ns, name, node string, started time.Time) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			NodeName: node, PriorityClassName: colocation.DefaultOfflinePriorityClass,
			Containers: []corev1.Container{{Name: "notebook", Image: "registry.invalid/notebook:never-pulled",
				Resources: corev1.ResourceRequirements{Requests: batch, Limits: batch}}},
		},
	}
	return createRunning(t, pod, started)
}

// onlinePod is a Burstable online service's pod on node.
func onlinePod(t *testing.T, ns, name, node string, started time.Time) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: "web", Image: "registry.invalid/web:never-pulled",
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("4Gi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				}}},
		},
	}
	return createRunning(t, pod, started)
}

// createRunning creates pod and writes its status as its kubelet would once
// it runs, ready, since started.
func createRunning(t *testing.T, pod *corev1.Pod, started time.Time) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	if err := apiServer.Client.Create(ctx, pod); err != nil {
		t.Fatalf("Creating pod %s: %v", pod.Name, err)
	}
	start := metav1.NewTime(started)
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &start
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: start}}
	for i, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: ptr.To(true),
			ContainerID: fmt.Sprintf("containerd://%064x", seq.Add(1)*100+int64(i)),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}},
		})
	}
	if err := apiServer.Client.Status().Update(ctx, pod); err != nil {
		t.Fatalf("Writing the status of pod %s: %v", pod.Name, err)
	}
	return pod
}

// createBudget makes a PodDisruptionBudget over the pods labelled with
// job's name that allows allowed disruptions now, its status written as
// the disruption controller (not running here) would.
func createBudget(t *testing.T, job *kubeflowv1.TFJob, allowed int32) *policyv1.PodDisruptionBudget {
	t.Helper()
	ctx := context.Background()
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(allowed)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{kubeflowv1.JobNameLabel: job.Name}},
		},
	}
	if err := apiServer.Client.Create(ctx, pdb); err != nil {
		t.Fatalf("Creating PodDisruptionBudget %s: %v", pdb.Name, err)
	}
	if err := setBudget(ctx, pdb, allowed); err != nil {
		t.Fatal(err)
	}
	return pdb
}

// setBudget writes how many disruptions the budget over one healthy pod
// allows now.
func setBudget(ctx context.Context, pdb *policyv1.PodDisruptionBudget, allowed int32) error {
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: allowed,
		CurrentHealthy: 1, DesiredHealthy: 1 - allowed, ExpectedPods: 1}
	if err := apiServer.Client.Status().Update(ctx, pdb); err != nil {
		return fmt.Errorf("writing the status of PodDisruptionBudget %s: %w", pdb.Name, err)
	}
	return nil
}
