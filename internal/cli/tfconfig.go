package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// tfConfig is the part of TF_CONFIG describe shows.
type tfConfig struct {
	Cluster map[string][]string `json:"cluster"`
	Task    struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	} `json:"task"`
}

// tfConfigOf reads TF_CONFIG from the pod's tensorflow container.
func tfConfigOf(pod *corev1.Pod) (*tfConfig, bool) {
	for _, c := range pod.Spec.Containers {
		if c.Name != kubeflowv1.ContainerName {
			continue
		}
		for _, env := range c.Env {
			if env.Name != "TF_CONFIG" {
				continue
			}
			var cfg tfConfig
			if err := json.Unmarshal([]byte(env.Value), &cfg); err != nil {
				return nil, false
			}
			return &cfg, true
		}
	}
	return nil, false
}

// taskOf is the pod's TensorFlow task ("worker:0") from its TF_CONFIG.
func taskOf(pod *corev1.Pod) string {
	cfg, ok := tfConfigOf(pod)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s:%d", cfg.Task.Type, cfg.Task.Index)
}

// clusterSizes summarises TF_CONFIG's cluster ("chief=1 ps=2 worker=4"):
// as a pod's TF_CONFIG has it, else computed from the spec; "" when the
// job has a single replica and so no TF_CONFIG.
func clusterSizes(job *kubeflowv1.TFJob, pods []corev1.Pod) string {
	for i := range pods {
		if cfg, ok := tfConfigOf(&pods[i]); ok {
			var parts []string
			for _, rtype := range kubeflowv1.ReplicaTypes {
				lower := strings.ToLower(string(rtype))
				if n := len(cfg.Cluster[lower]); n > 0 {
					parts = append(parts, fmt.Sprintf("%s=%d", lower, n))
				}
			}
			return strings.Join(parts, " ")
		}
	}
	if job.TotalReplicas() <= 1 {
		return ""
	}
	var parts []string
	for _, rtype := range replicaTypes(job) {
		parts = append(parts, fmt.Sprintf("%s=%d", strings.ToLower(string(rtype)), job.Spec.TFReplicaSpecs[rtype].ReplicaCount()))
	}
	return strings.Join(parts, " ") + " (from the spec; no pod yet)"
}
