package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// newWaitCommand is `backfill wait`: submit's wait, for jobs already
// submitted, by whoever may read them (the view role is enough).
func newWaitCommand() *cobra.Command {
	var (
		until   string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "wait [tfjobs] JOB... [--for=done|running]",
		Short: "Wait until TFJobs have finished (or run), showing one progress line; fail when one fails",
		Long: `wait follows TFJobs already submitted, as submit --wait does: one progress
line (state, replicas running, restarts, disruptions) until every job has
succeeded or failed (--for=done, the default) or runs (--for=running). It
exits 0 when every job got there and succeeded or runs, 1 when a job
failed, was deleted, or the timeout passed. Reading the jobs and their pods
is all it needs: a user with the view role in the namespace may wait.`,
		Example: `  backfill wait mnist
  backfill wait mnist resnet --for=running --timeout=5m
  backfill wait tfjob/mnist -n training`,
	}
	kf := addKubeFlags(cmd)
	cmd.Flags().StringVar(&until, "for", waitDone, "what to wait for: done (succeeded or failed) or running")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "give up waiting after this long")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		names, err := jobNamesOf("wait", args)
		if err != nil {
			return err
		}
		if len(names) == 0 {
			return usageError{errors.New("wait takes the names of the TFJobs to wait for: backfill wait JOB [JOB…]")}
		}
		if until != waitDone && until != waitRunning {
			return usageError{fmt.Errorf("--for %q: use --for=done or --for=running", until)}
		}
		if timeout <= 0 {
			return usageError{fmt.Errorf("--timeout %s: give a positive duration such as 10m", timeout)}
		}
		k, err := kf.connect()
		if err != nil {
			return err
		}
		return waitForNamedJobs(cmd.Context(), k.client, k.namespace, names, until, timeout, cmd.OutOrStdout())
	}
	return cmd
}

// waitForNamedJobs waits for the jobs of namespace called names, once it
// has seen that each exists: a name that is none is said at once, not as
// a job deleted during the wait.
func waitForNamedJobs(ctx context.Context, c client.Client, namespace string, names []string, until string, timeout time.Duration, out io.Writer) error {
	seen := make(map[string]bool, len(names))
	jobs := make([]manifest, 0, len(names))
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		var job kubeflowv1.TFJob
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &job); err != nil {
			return notFoundOr(err, namespace, name)
		}
		object := &unstructured.Unstructured{}
		object.SetGroupVersionKind(kubeflowv1.GroupVersion.WithKind(kubeflowv1.Kind))
		object.SetNamespace(namespace)
		object.SetName(name)
		jobs = append(jobs, manifest{where: "TFJob " + name, object: object})
	}
	return waitForJobs(ctx, c, jobs, until, timeout, out)
}
