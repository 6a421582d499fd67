package report

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LeaderLabel marks, with the value "true", the manager pod that serves
// reports: only the leader listens, so the reports Service selects the
// manager's pods that carry it.
const LeaderLabel = "backfill.dev/report-leader"

// LeaderPodLabel keeps LeaderLabel on the manager's own pod while it
// leads, a manager Runnable of the leader.
type LeaderPodLabel struct {
	client client.Client
	pod    types.NamespacedName
	log    logr.Logger
}

// NewLeaderPodLabel labels pod, the manager's own, through c.
func NewLeaderPodLabel(c client.Client, pod types.NamespacedName, log logr.Logger) *LeaderPodLabel {
	return &LeaderPodLabel{client: c, pod: pod, log: log}
}

// Clear removes the label, before the manager starts: a restarted
// container's pod keeps its labels, not its leadership.
func (l *LeaderPodLabel) Clear(ctx context.Context) error {
	if err := l.patch(ctx, nil); err != nil {
		return fmt.Errorf("removing the label %s from the manager's pod %s: %w", LeaderLabel, l.pod, err)
	}
	return nil
}

// NeedLeaderElection is true: only the leader's pod is labelled.
func (l *LeaderPodLabel) NeedLeaderElection() bool { return true }

// Start labels the pod, retrying until it succeeds; the label goes with
// the pod or with the next start's Clear, as leadership ends with the
// process.
func (l *LeaderPodLabel) Start(ctx context.Context) error {
	value := "true"
	_ = wait.PollUntilContextCancel(ctx, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := l.patch(ctx, &value); err != nil {
			l.log.Error(err, "Cannot label the manager's pod as the one serving reports; retrying", "pod", l.pod, "label", LeaderLabel)
			return false, nil
		}
		return true, nil
	})
	<-ctx.Done()
	return nil
}

// patch sets the label to value, or removes it for nil.
func (l *LeaderPodLabel) patch(ctx context.Context, value *string) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: l.pod.Name, Namespace: l.pod.Namespace}}
	raw := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, LeaderLabel)
	if value != nil {
		raw = fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, LeaderLabel, *value)
	}
	return l.client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, []byte(raw)))
}
