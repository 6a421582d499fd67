package nodeagent

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

// Pod is what the agent knows of a pod of its node.
type Pod struct {
	Namespace, Name string
	UID             types.UID
	QOS             corev1.PodQOSClass
	// Reclaimed pods are offline pods on reclaimed capacity: the only
	// pods whose CPU the agent caps and whom it evicts. Every other pod,
	// offline pods on requests the scheduler promised them included, is
	// protected as online.
	Reclaimed bool
	// Limits are the kubelet's own CPU quotas of the pod and of its
	// containers, which the agent's ceiling never raises and which it puts
	// back when it lets go.
	Limits nodefs.Limits
	// Weight is the pod's share of the offline ceiling, in milli-cores:
	// its CPU limit, else what it holds of reclaimed CPU.
	Weight int64
	// Resize is where an in-place resize of the pod's resources stands.
	Resize Resize
}

// PodSource lists the pods of the agent's node.
type PodSource interface {
	Pods(ctx context.Context) ([]Pod, error)
}

// group is the pod's cgroup.
func (p Pod) group(fs *nodefs.FS) string { return fs.PodGroup(p.QOS, p.UID) }
