package devcluster

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

// simulateTraining stands in for the training code of the local cluster:
// the example TFJobs apply unchanged, so their pods carry no simulation
// hints. It gives every training pod that lacks them how long it runs
// (parameter servers run until they are stopped, as in real life) and
// how much CPU and memory it uses: what it requested, of cpu and memory or
// of reclaimed capacity. It also writes what
// each pod's container prints into logDir, for `kubectl logs`, and reports
// the jobs' progress to the manager (reportProgress). It looks
// once a second, which is plenty for a simulation.
func simulateTraining(ctx context.Context, cfg *rest.Config, runFor time.Duration, logDir string) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		ctrl.Log.Error(err, "Training simulation off")
		return
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		ctrl.Log.Error(err, "Training simulation off")
		return
	}
	logs, err := newTrainingLogs(logDir, dyn)
	if err != nil {
		ctrl.Log.Error(err, "Training simulation off")
		return
	}
	go reportProgress(ctx, cs, dyn, runFor)
	selector := kubeflowv1.OperatorNameLabel + "=" + kubeflowv1.OperatorName
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err == nil {
			for i := range pods.Items {
				pod := &pods.Items[i]
				if hints := simulationHints(pod, runFor); hints != nil {
					patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": hints}}) // a map of strings always marshals
					if _, err := cs.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
						ctrl.Log.Error(err, "Cannot give a pod its simulation hints; it trains without them", "pod", pod.Namespace+"/"+pod.Name)
					}
				}
			}
			logs.update(ctx, pods.Items, time.Now())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// simulationHints are the annotations a training pod still needs, or nil.
func simulationHints(pod *corev1.Pod, runFor time.Duration) map[string]string {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	hints := map[string]string{}
	a := pod.Annotations
	if _, ok := a[kwok.SimDurationAnnotation]; !ok && pod.Labels[kubeflowv1.ReplicaTypeLabel] != "ps" {
		hints[kwok.SimDurationAnnotation] = runFor.String()
	}
	if _, ok := a[kwok.UsageCPUAnnotation]; !ok {
		if cpu, mem := requests(pod); cpu != "" {
			hints[kwok.UsageCPUAnnotation] = cpu
			hints[kwok.UsageMemoryAnnotation] = mem
		}
	}
	if len(hints) == 0 {
		return nil
	}
	return hints
}

// requests are the CPU and memory the tensorflow container asks for, as
// reclaimed capacity (milli-CPU and bytes; its cpu and memory requests
// are then 0) or as cpu and memory.
func requests(pod *corev1.Pod) (cpu, mem string) {
	for _, c := range pod.Spec.Containers {
		if c.Name != kubeflowv1.ContainerName {
			continue
		}
		r := c.Resources.Requests
		if q, ok := r[colocation.ResourceBatchCPU]; ok {
			cpu = resource.NewMilliQuantity(q.Value(), resource.DecimalSI).String()
		} else if q, ok := r[corev1.ResourceCPU]; ok {
			cpu = q.String()
		}
		if q, ok := r[colocation.ResourceBatchMemory]; ok {
			mem = q.String()
		} else if q, ok := r[corev1.ResourceMemory]; ok {
			mem = q.String()
		}
	}
	if mem == "" {
		mem = "1Gi"
	}
	return cpu, mem
}
