package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/queueing"
)

// fieldManager owns the fields submit applies (server-side apply).
const fieldManager = "backfill"

// submitOptions are the flags of submit.
type submitOptions struct {
	files          []string
	wait           bool
	waitFor        string
	timeout        time.Duration
	forceConflicts bool
	dryRun         bool
	queue          string
}

func newSubmitCommand() *cobra.Command {
	var o submitOptions
	cmd := &cobra.Command{
		Use:   "submit -f FILE",
		Short: "Validate and apply TFJobs, then optionally wait until they run or finish",
		Long: `submit reads TFJobs from files (or - for stdin), checks each strictly (an
unknown field is an error), validates all of them with the cluster (a
server-side dry run, so the CRD's rules speak) and only then applies them
(server-side apply, field manager "backfill"). With --wait it shows one
progress line until every job runs (or, with --wait-for=done, has finished),
and fails when a job fails or the timeout passes.`,
		Example: `  backfill submit -f mnist.yaml
  backfill submit -f mnist.yaml --wait
  backfill submit -f mnist.yaml --queue training
  cat jobs.yaml | kubectl backfill submit -f - --wait-for=done --timeout=30m`,
		Args: cobra.NoArgs,
	}
	kf := addKubeFlags(cmd)
	f := cmd.Flags()
	f.StringArrayVarP(&o.files, "filename", "f", nil, "a file of TFJobs (YAML or JSON, several documents allowed); - reads stdin; repeatable")
	f.BoolVar(&o.wait, "wait", false, "wait until every job runs (see --wait-for)")
	f.StringVar(&o.waitFor, "wait-for", "", "what to wait for: running or done (implies --wait)")
	f.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up waiting after this long")
	f.BoolVar(&o.forceConflicts, "force-conflicts", false, "take over fields another manager (e.g. kubectl) set")
	f.BoolVar(&o.dryRun, "dry-run", false, "only validate with the cluster; change nothing")
	f.StringVar(&o.queue, "queue", "", "submit to this Kueue LocalQueue of the jobs' namespace (sets the label "+queueing.QueueNameLabel+"); Kueue keeps each job suspended until it admits it")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := o.check(); err != nil {
			return err
		}
		manifests, err := readManifests(o.files, cmd.InOrStdin())
		if err != nil {
			return err
		}
		k, err := kf.connect()
		if err != nil {
			return err
		}
		nsFlag := ""
		if cmd.Flags().Changed("namespace") {
			nsFlag = k.namespace
		}
		if err := placeInNamespace(manifests, k.namespace, nsFlag); err != nil {
			return err
		}
		if o.queue != "" {
			if err := queueManifests(manifests, o.queue); err != nil {
				return err
			}
		}
		if err := checkLocalQueues(cmd.Context(), k.client, manifests); err != nil {
			return err
		}
		return o.run(cmd.Context(), k, manifests, cmd.OutOrStdout())
	}
	return cmd
}

// check refuses flag combinations that make no sense.
func (o *submitOptions) check() error {
	if len(o.files) == 0 {
		return usageError{errors.New("give the TFJobs with -f FILE (or -f - for stdin)")}
	}
	switch o.waitFor {
	case "":
		if o.wait {
			o.waitFor = waitRunning
		}
	case waitRunning, waitDone:
	default:
		return usageError{fmt.Errorf("--wait-for %q: use --wait-for=running or --wait-for=done", o.waitFor)}
	}
	if o.timeout <= 0 {
		return usageError{fmt.Errorf("--timeout %s: give a positive duration such as 10m", o.timeout)}
	}
	if err := checkQueueName(o.queue); err != nil {
		return err
	}
	if o.dryRun && o.waitFor != "" {
		return usageError{errors.New("--dry-run changes nothing, so there is nothing to wait for: drop --wait")}
	}
	return nil
}

// placeInNamespace gives manifests without a namespace the current one,
// and refuses one whose namespace contradicts an explicit -n, as kubectl.
func placeInNamespace(manifests []manifest, current, flag string) error {
	// Keyed on the namespace filled in: a job written without one and the
	// same job written with the current one are the same TFJob.
	seen := make(map[string]string, len(manifests))
	for _, m := range manifests {
		ns := m.object.GetNamespace()
		switch {
		case ns == "":
			m.object.SetNamespace(current)
		case flag != "" && ns != flag:
			return usageError{fmt.Errorf("%s: TFJob %s is in namespace %s but -n says %s: drop -n or make them agree", m.where, m.object.GetName(), ns, flag)}
		}
		if first, dup := seen[m.name()]; dup {
			return usageError{fmt.Errorf("%s: TFJob %s is already in %s: give each TFJob once", m.where, m.object.GetName(), first)}
		}
		seen[m.name()] = m.where
	}
	return nil
}

func (o *submitOptions) run(ctx context.Context, k *kube, manifests []manifest, out io.Writer) error {
	// Validate everything before changing anything.
	for _, m := range manifests {
		// Patch fills in what the server answered: keep the manifest as
		// the user wrote it.
		if err := o.apply(ctx, k.client, manifest{where: m.where, object: m.object.DeepCopy()}, true); err != nil {
			return err
		}
	}
	if o.dryRun {
		for _, m := range manifests {
			fmt.Fprintf(out, "tfjob.kubeflow.org/%s valid (dry run)\n", m.object.GetName())
		}
		return nil
	}
	for _, m := range manifests {
		before := &unstructured.Unstructured{}
		before.SetGroupVersionKind(m.object.GroupVersionKind())
		existed := k.client.Get(ctx, client.ObjectKeyFromObject(m.object), before) == nil
		applied := m.object.DeepCopy()
		if err := o.apply(ctx, k.client, manifest{where: m.where, object: applied}, false); err != nil {
			return err
		}
		verb := "created"
		if existed {
			verb = "configured"
			if before.GetResourceVersion() == applied.GetResourceVersion() {
				verb = "unchanged"
			}
		}
		fmt.Fprintf(out, "tfjob.kubeflow.org/%s %s\n", applied.GetName(), verb)
	}
	if o.waitFor == "" {
		return nil
	}
	return waitForJobs(ctx, k.client, manifests, o.waitFor, o.timeout, out)
}

// apply applies one manifest server-side; an invalid object is the user's
// to fix, so it is a usage error naming the document.
func (o *submitOptions) apply(ctx context.Context, c client.Client, m manifest, dryRun bool) error {
	opts := []client.PatchOption{client.FieldOwner(fieldManager), client.FieldValidation("Strict")}
	if o.forceConflicts {
		opts = append(opts, client.ForceOwnership)
	}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	err := c.Patch(ctx, m.object, client.Apply, opts...) //nolint:staticcheck // unstructured objects have no apply configuration
	switch {
	case err == nil:
		return nil
	case apierrors.IsInvalid(err):
		return usageError{fmt.Errorf("%s: TFJob %s is invalid: %s", m.where, m.object.GetName(), invalidFields(err))}
	case apierrors.IsBadRequest(err):
		return usageError{fmt.Errorf("%s: %w", m.where, err)}
	case apierrors.IsConflict(err):
		return usageError{fmt.Errorf("%s: %w (another manager set these fields: pass --force-conflicts to take them over)", m.where, err)}
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s: %w (does namespace %s exist, and is the TFJob CRD installed?)", m.where, err, m.object.GetNamespace())
	}
	return fmt.Errorf("%s: applying TFJob %s: %w", m.where, m.name(), err)
}

// invalidFields lists what the apiserver found invalid, field by field,
// leaving out its note that further rules were not checked.
func invalidFields(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return err.Error()
	}
	var parts []string
	for _, cause := range status.Status().Details.Causes {
		if strings.Contains(cause.Message, "some validation rules were not checked") {
			continue
		}
		parts = append(parts, cause.Field+": "+cause.Message)
	}
	if len(parts) == 0 {
		return err.Error()
	}
	return strings.Join(parts, "; ")
}
