package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// maxEvents is how many of the most recent events describe shows.
const maxEvents = 20

func newDescribeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe [tfjob] JOB | describe node NODE",
		Short: "Show a TFJob in detail (its Kueue queue, replicas, placement, TF_CONFIG, events, why pods wait), or a node's reclaimed capacity and the formula behind it",
		Example: `  backfill describe mnist
  kubectl backfill describe mnist -n training
  kubectl backfill describe node gpu-0`,
	}
	kf := addKubeFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		kind, name, err := describedObject(args)
		if err != nil {
			return usageError{err}
		}
		k, err := kf.connect()
		if err != nil {
			return err
		}
		if kind == "node" {
			d, err := gatherNodeDescription(cmd.Context(), k, name)
			if err != nil {
				return err
			}
			return renderNodeDescription(cmd.OutOrStdout(), d, time.Now())
		}
		d, err := gatherDescription(cmd.Context(), k, name)
		if err != nil {
			return err
		}
		return renderDescription(cmd.OutOrStdout(), d, time.Now())
	}
	return cmd
}

// describedObject reads describe's arguments: a TFJob's name, or a kind
// (tfjob or node, kubectl's way) and a name.
func describedObject(args []string) (kind, name string, err error) {
	usage := errors.New("describe takes a TFJob name, or a kind and a name: backfill describe JOB, backfill describe tfjob JOB, backfill describe node NODE")
	switch len(args) {
	case 1:
		if kind, name, typed := strings.Cut(args[0], "/"); typed {
			return describedObject([]string{kind, name})
		}
		return "tfjob", args[0], nil
	case 2:
		switch {
		case isTFJobKind(args[0]):
			return "tfjob", args[1], nil
		case args[0] == "node", args[0] == "nodes", args[0] == "no":
			return "node", args[1], nil
		}
		return "", "", fmt.Errorf("describe: unknown kind %q (want tfjob or node): %w", args[0], usage)
	}
	return "", "", usage
}

// description is everything describe shows about one job.
type description struct {
	job    *kubeflowv1.TFJob
	pods   []corev1.Pod
	events []corev1.Event // oldest first, at most maxEvents
	queue  *queueReading  // nil for a job that names no Kueue queue
}

func gatherDescription(ctx context.Context, k *kube, name string) (*description, error) {
	var job kubeflowv1.TFJob
	if err := k.client.Get(ctx, client.ObjectKey{Namespace: k.namespace, Name: name}, &job); err != nil {
		return nil, notFoundOr(err, k.namespace, name)
	}
	var pods corev1.PodList
	if err := k.client.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{
		kubeflowv1.OperatorNameLabel: kubeflowv1.OperatorName, kubeflowv1.JobNameLabel: job.Name,
	}); err != nil {
		return nil, fmt.Errorf("listing the pods of TFJob %s: %w", job.Name, err)
	}
	sortPods(pods.Items)
	events, err := k.clientset.CoreV1().Events(job.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	return &description{
		job: &job, pods: pods.Items, events: eventsAbout(events.Items, &job, pods.Items),
		queue: readQueue(ctx, k.client, &job),
	}, nil
}

// eventsAbout keeps the events of the job and its pods, the most recent
// maxEvents, oldest first.
func eventsAbout(all []corev1.Event, job *kubeflowv1.TFJob, pods []corev1.Pod) []corev1.Event {
	uids := map[types.UID]bool{job.UID: true}
	names := map[string]bool{}
	for _, pod := range pods {
		uids[pod.UID] = true
		names[pod.Name] = true
	}
	var kept []corev1.Event
	for _, e := range all {
		about := e.InvolvedObject
		if uids[about.UID] || about.UID == "" && (about.Kind == "TFJob" && about.Name == job.Name || about.Kind == "Pod" && names[about.Name]) {
			kept = append(kept, e)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return eventTime(&kept[i]).Before(eventTime(&kept[j])) })
	if len(kept) > maxEvents {
		kept = kept[len(kept)-maxEvents:]
	}
	return kept
}

// eventTime is when an event last happened, from whichever field its
// reporter filled (core/v1 or events.k8s.io/v1).
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}
