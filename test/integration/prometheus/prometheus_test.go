//go:build integration

package prometheus

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/backfill-dev/backfill/internal/devcluster/gpusim"
	"github.com/backfill-dev/backfill/internal/devcluster/promconfig"
)

// fakeLister is a cluster of fixed nodes and pods.
type fakeLister struct {
	nodes []corev1.Node
	pods  []corev1.Pod
}

func (f fakeLister) Nodes(context.Context) ([]corev1.Node, error) { return f.nodes, nil }
func (f fakeLister) Pods(context.Context) ([]corev1.Pod, error)   { return f.pods, nil }

// oneTrainingPod is a 2-GPU node with one running pod holding one GPU at
// 42 % utilisation; the other GPU is free.
func oneTrainingPod() fakeLister {
	gpus := *resource.NewQuantity(2, resource.DecimalSI)
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-0"}}
	node.Status.Allocatable = corev1.ResourceList{gpusim.ResourceGPU: gpus}
	one := *resource.NewQuantity(1, resource.DecimalSI)
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "mnist-worker-0", Namespace: "ml",
			Annotations: map[string]string{gpusim.UtilAnnotation: "42"},
		},
		Spec: corev1.PodSpec{NodeName: "gpu-node-0", Containers: []corev1.Container{{
			Name:      "tensorflow",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{gpusim.ResourceGPU: one}},
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	return fakeLister{nodes: []corev1.Node{node}, pods: []corev1.Pod{pod}}
}

func TestPrometheusVersion(t *testing.T) {
	out, err := exec.Command(binary(t, "prometheus"), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("prometheus --version: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "version 3.16.0") {
		t.Errorf("prometheus --version says\n%s\nwant version 3.16.0 (the Makefile sets it with -ldflags -X)", out)
	}
}

func TestPrometheusScrapesGPUSim(t *testing.T) {
	sim := startGPUSim(t, oneTrainingPod())
	addr := freeAddr(t)
	config, err := promconfig.Config(promconfig.Targets{
		ManagersFile: filepath.Join(t.TempDir(), "managers.json"), // no file: no manager target, which this test ignores
		Kwok:         freeAddr(t),
		Nodes:        []string{"gpu-node-0"},
		GPUSim:       sim,
		Prometheus:   addr,
	})
	if err != nil {
		t.Fatalf("Generating the configuration: %v", err)
	}
	prom := startPrometheus(t, addr, config)

	prom.eventually(t, "Prometheus ready", func(ctx context.Context) error {
		return prom.get(ctx, "/-/ready", nil)
	})

	prom.eventually(t, "the dcgm-exporter and prometheus jobs up", func(ctx context.Context) error {
		targets, err := prom.targets(ctx)
		if err != nil {
			return err
		}
		health := map[string]string{}
		for _, tg := range targets {
			health[tg.Labels["job"]] = tg.Health + " " + tg.LastError
		}
		for _, job := range []string{promconfig.JobDCGMExporter, promconfig.JobPrometheus} {
			if strings.TrimSpace(health[job]) != "up" {
				return fmt.Errorf("job %s: %q; all: %v", job, health[job], health)
			}
		}
		return nil
	})

	// honor_labels: false and the exporter's own target labels move the
	// pod's labels to exported_*, as on a real cluster.
	var held []sample
	prom.eventually(t, "a GPU utilisation series for the pod", func(ctx context.Context) error {
		held, err = prom.query(ctx, `DCGM_FI_DEV_GPU_UTIL{exported_pod="mnist-worker-0"}`)
		if err == nil && len(held) != 1 {
			err = fmt.Errorf("%d series, want 1: %v", len(held), held)
		}
		return err
	})
	want := map[string]string{
		"__name__": "DCGM_FI_DEV_GPU_UTIL", "job": promconfig.JobDCGMExporter, "instance": sim,
		"gpu": "0", "device": "nvidia0", "modelName": gpusim.ModelName, "Hostname": "gpu-node-0",
		"exported_pod": "mnist-worker-0", "exported_namespace": "ml", "exported_container": "tensorflow",
		"pod": "gpusim", "namespace": "backfill-dev", "container": "gpusim",
	}
	got := held[0].Metric
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s = %q, want %q (series %v)", k, got[k], v, got)
		}
	}
	if !strings.HasPrefix(got["UUID"], "GPU-") {
		t.Errorf("UUID = %q, want a GPU-… UUID", got["UUID"])
	}
	if v := held[0].Value[1]; v != "42" {
		t.Errorf("value %v, want 42 (the pod's %s annotation)", v, gpusim.UtilAnnotation)
	}

	// The free GPU has no exported_pod: an empty label is no label.
	free, err := prom.query(context.Background(), `DCGM_FI_DEV_GPU_UTIL{gpu="1", exported_pod=""}`)
	if err != nil {
		t.Fatalf("Querying the free GPU: %v", err)
	}
	if len(free) != 1 || free[0].Value[1] != "0" {
		t.Errorf("free GPU: %v, want one series at 0", free)
	}
}
