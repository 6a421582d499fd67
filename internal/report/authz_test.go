package report

import (
	"context"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// TestForgedReplicas: a pod of the namespace that names job mnist as its
// controller, with its UID and the operator's labels, reports nothing for
// it unless it is a replica the operator would create: the rule of the
// controller (tfjob.ReplicaOf), whatever labels and owner references say.
func TestForgedReplicas(t *testing.T) {
	forge := func(name string, mutate func(*corev1.Pod)) *corev1.Pod {
		pod := replica(ns, name, types.UID(name+"-uid"), "mnist", jobUID)
		if mutate != nil {
			mutate(pod)
		}
		return pod
	}
	cases := map[string]struct {
		pod    *corev1.Pod
		status int
		reason string
	}{
		"the operator's replica": {pod: forge("mnist-worker-0", nil)},
		"a name that is no replica's": {pod: forge("forged", func(p *corev1.Pod) {
			p.Labels[kubeflowv1.ReplicaIndexLabel] = "0"
		}), status: http.StatusForbidden, reason: "its name is not mnist-worker-0"},
		"a replica's name with an index beyond the job's": {pod: forge("mnist-worker-7", nil), status: http.StatusForbidden, reason: "not an index below the job's 2 Worker replica(s)"},
		"a type the job does not run": {pod: forge("mnist-ps-0", func(p *corev1.Pod) {
			p.Labels[kubeflowv1.ReplicaTypeLabel] = "ps"
		}), status: http.StatusForbidden, reason: "not a replica type of the job"},
		"no blockOwnerDeletion": {pod: forge("mnist-worker-1", func(p *corev1.Pod) {
			p.OwnerReferences[0].BlockOwnerDeletion = nil
		}), status: http.StatusForbidden, reason: "blockOwnerDeletion"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objects := newFakeObjects()
			key := types.NamespacedName{Namespace: ns, Name: tc.pod.Name}
			objects.pods[key] = tc.pod
			_, _, refused := authorize(context.Background(), objects, podIdentity(ns, tc.pod.Name, tc.pod.UID), types.NamespacedName{Namespace: ns, Name: "mnist"})
			switch {
			case tc.status == 0 && refused != nil:
				t.Errorf("refused %d %q, want the report authorized", refused.status, refused.reason)
			case tc.status != 0 && refused == nil:
				t.Errorf("authorized, want %d", tc.status)
			case tc.status != 0 && (refused.status != tc.status || !strings.Contains(refused.reason, tc.reason) || !strings.Contains(refused.reason, "is not a replica of TFJob ml/mnist")):
				t.Errorf("refused %d %q, want %d saying it is not a replica: %q", refused.status, refused.reason, tc.status, tc.reason)
			}
		})
	}
}
