package main

import (
	"context"
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// onlineNamespace holds the reclaim-scale run's online pods.
const onlineNamespace = "online"

// onlinePlan is the online pods of every node: plain pods of no TFJob,
// without backfill's labels, at the default priority, so the manager
// counts them online. Each node gets 1–3 whose requests total 60–75 % of
// its allocatable cpu and memory, a function of the seed and the node.
type onlinePlan struct {
	pods []*corev1.Pod
	// layers are the pods to bind together: layer k holds the k-th pod of
	// every node that has one, and those nodes in the same order.
	layers []podLayer
	// requests are the online requests per node: milli-CPU and bytes.
	requests map[string]reclaim.Resources
}

type podLayer struct{ pods, nodes []string }

// planOnline shapes the online pods of nodes.
func planOnline(seed int64, nodes []string) onlinePlan {
	plan := onlinePlan{layers: make([]podLayer, 3), requests: map[string]reclaim.Resources{}}
	cpu, mem := nodeAllocatableCPU.MilliValue(), nodeAllocatableMemory.Value()
	for i, node := range nodes {
		r := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
		count := 1 + r.IntN(3)
		cpuShare, memShare := 0.60+0.15*r.Float64(), 0.60+0.15*r.Float64()
		weights, sum := make([]float64, count), 0.0
		for j := range weights {
			weights[j] = 1 + r.Float64()
			sum += weights[j]
		}
		var total reclaim.Resources
		for j, w := range weights {
			req := reclaim.Resources{
				MilliCPU: int64(float64(cpu) * cpuShare * w / sum),
				Memory:   int64(float64(mem)*memShare*w/sum) &^ (1<<20 - 1),
			}
			total = total.Add(req)
			name := fmt.Sprintf("online-%s-%d", node, j)
			plan.pods = append(plan.pods, onlinePod(name, req))
			plan.layers[j].pods = append(plan.layers[j].pods, name)
			plan.layers[j].nodes = append(plan.layers[j].nodes, node)
		}
		plan.requests[node] = total
	}
	return plan
}

// onlinePod is an unscheduled online pod requesting req.
func onlinePod(name string, req reclaim.Resources) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: onlineNamespace, Name: name, Labels: map[string]string{"app": "online"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "app",
			Image: "online-app:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(req.MilliCPU, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(req.Memory, resource.BinarySI),
			}},
		}}},
	}
}

// createOnline creates the plan's pods and binds them to their nodes, one
// layer at a time, returning once all run.
func createOnline(ctx context.Context, c *cluster, plan onlinePlan, concurrency int) error {
	if err := c.namespace(ctx, onlineNamespace); err != nil {
		return err
	}
	err := forEach(ctx, plan.pods, concurrency, func(ctx context.Context, pod *corev1.Pod) error {
		if _, err := c.kube.CoreV1().Pods(onlineNamespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating pod %s: %w", pod.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, l := range plan.layers {
		if len(l.pods) == 0 {
			continue
		}
		if err := bindPods(ctx, c, onlineNamespace, l.pods, l.nodes, concurrency); err != nil {
			return err
		}
	}
	return nil
}
