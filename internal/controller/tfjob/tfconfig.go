package tfjob

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// tfConfig is the TF_CONFIG environment variable TensorFlow reads to find
// its cluster, in the shape Kubeflow v1 writes it.
type tfConfig struct {
	Cluster     map[string][]string `json:"cluster"`
	Task        tfTask              `json:"task"`
	Environment string              `json:"environment"`
}

// sparseTFConfig is TF_CONFIG under enableDynamicWorker: a worker knows the
// parameter servers and itself only.
type sparseTFConfig struct {
	Cluster sparseCluster `json:"cluster"`
	Task    tfTask        `json:"task"`
}

type sparseCluster struct {
	Worker map[int]string `json:"worker"`
	PS     []string       `json:"ps"`
}

type tfTask struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

// isDistributed reports whether the job has more than one replica in total;
// a single replica gets no TF_CONFIG, as in Kubeflow v1.
func isDistributed(job *kubeflowv1.TFJob) bool {
	return job.TotalReplicas() > 1
}

// clusterSpec maps each lowercase replica type to the addresses of its
// replicas' services. The evaluator is left out: it is not part of the
// training cluster, its own task names it, and TF2's
// ParameterServerStrategy waits forever for a listed task that never joins
// (Kubeflow v1 bug #1139).
func clusterSpec(job *kubeflowv1.TFJob, domain string) map[string][]string {
	cluster := map[string][]string{}
	for rtype, spec := range job.Spec.TFReplicaSpecs {
		if rtype == kubeflowv1.ReplicaTypeEvaluator {
			continue
		}
		port := tensorflowPort(spec)
		addrs := make([]string, 0, spec.ReplicaCount())
		for i := 0; i < int(spec.ReplicaCount()); i++ {
			host := replicaName(job.Name, rtype, i) + "." + job.Namespace + ".svc"
			if domain != "" {
				host += "." + domain
			}
			addrs = append(addrs, fmt.Sprintf("%s:%d", host, port))
		}
		cluster[strings.ToLower(string(rtype))] = addrs
	}
	return cluster
}

// tfConfigFor returns the TF_CONFIG of one replica. domain is the cluster
// domain appended to service names, e.g. "cluster.local"; empty for none.
func tfConfigFor(job *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType, index int, domain string) (string, error) {
	cluster := clusterSpec(job, domain)
	task := tfTask{Type: strings.ToLower(string(rtype)), Index: index}
	var v any = tfConfig{Cluster: cluster, Task: task, Environment: "cloud"}
	if job.Spec.EnableDynamicWorker {
		v = sparseTFConfig{Cluster: sparseClusterFor(cluster, task), Task: task}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding TF_CONFIG: %w", err)
	}
	return string(b), nil
}

// sparseClusterFor keeps of the cluster what one task needs: a parameter
// server knows itself, a worker knows every parameter server and itself.
func sparseClusterFor(cluster map[string][]string, task tfTask) sparseCluster {
	sparse := sparseCluster{Worker: map[int]string{}, PS: []string{}}
	switch task.Type {
	case "ps":
		sparse.PS = append(sparse.PS, cluster["ps"][task.Index])
	case "worker":
		sparse.PS = append(sparse.PS, cluster["ps"]...)
		sparse.Worker[task.Index] = cluster["worker"][task.Index]
	}
	return sparse
}

// tensorflowPort is the port of the tensorflow container named tfjob-port,
// or the default 2222.
func tensorflowPort(spec *kubeflowv1.ReplicaSpec) int32 {
	for _, c := range spec.Template.Spec.Containers {
		if c.Name != kubeflowv1.ContainerName {
			continue
		}
		for _, p := range c.Ports {
			if p.Name == kubeflowv1.PortName {
				return p.ContainerPort
			}
		}
	}
	return kubeflowv1.DefaultPort
}

// tensorflowPorts are the named ports of the tensorflow container, with
// tfjob-port added when missing; each replica's service exposes them.
func tensorflowPorts(spec *kubeflowv1.ReplicaSpec) []corev1.ContainerPort {
	var ports []corev1.ContainerPort
	hasDefault := false
	for _, c := range spec.Template.Spec.Containers {
		if c.Name != kubeflowv1.ContainerName {
			continue
		}
		for _, p := range c.Ports {
			if p.Name == "" {
				continue
			}
			ports = append(ports, p)
			hasDefault = hasDefault || p.Name == kubeflowv1.PortName
		}
	}
	if !hasDefault {
		ports = append(ports, corev1.ContainerPort{Name: kubeflowv1.PortName, ContainerPort: kubeflowv1.DefaultPort, Protocol: corev1.ProtocolTCP})
	}
	return ports
}
