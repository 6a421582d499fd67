package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

func newGetCommand() *cobra.Command {
	var (
		allNamespaces bool
		output        string
	)
	cmd := &cobra.Command{
		Use:   "get [tfjobs] [JOB...]",
		Short: "List TFJobs: state, replicas ready/total, restarts, disruptions, last checkpoint, age, why pods wait for capacity",
		Example: `  backfill get
  backfill get mnist -o wide
  backfill get tfjobs -A -o name`,
	}
	kf := addKubeFlags(cmd)
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "list the TFJobs of every namespace")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: wide, yaml, json or name")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(output, outputTable, outputWide, outputYAML, outputJSON, outputName); err != nil {
			return err
		}
		names, err := jobNamesOf("get", args)
		if err != nil {
			return err
		}
		if allNamespaces && len(names) > 0 {
			return usageError{errors.New("a TFJob cannot be retrieved by name across all namespaces: drop -A or the names")}
		}
		k, err := kf.connect()
		if err != nil {
			return err
		}
		namespace := k.namespace
		if allNamespaces {
			namespace = ""
		}
		jobs, getErr := getJobs(cmd.Context(), k.client, namespace, names)
		if len(jobs) == 0 && getErr != nil {
			return getErr
		}
		if len(jobs) == 0 {
			where := "in " + namespace + " namespace"
			if allNamespaces {
				where = ""
			}
			fmt.Fprintln(cmd.ErrOrStderr(), strings.TrimSpace("No resources found "+where)+".")
			return nil
		}
		if err := printGet(cmd.Context(), cmd.OutOrStdout(), k, jobs, output, allNamespaces, len(names) == 1); err != nil {
			return err
		}
		return getErr
	}
	return cmd
}

// getJobs lists the jobs of namespace ("" for all), or gets the named
// ones; a missing name is an error after the others are returned.
func getJobs(ctx context.Context, c client.Client, namespace string, names []string) ([]kubeflowv1.TFJob, error) {
	if len(names) == 0 {
		var list kubeflowv1.TFJobList
		if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
			return nil, fmt.Errorf("listing TFJobs: %w", err)
		}
		sort.Slice(list.Items, func(i, j int) bool {
			a, b := list.Items[i], list.Items[j]
			return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
		})
		return list.Items, nil
	}
	var jobs []kubeflowv1.TFJob
	var errs []error
	for _, name := range names {
		var job kubeflowv1.TFJob
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &job); err != nil {
			errs = append(errs, notFoundOr(err, namespace, name))
			continue
		}
		jobs = append(jobs, job)
	}
	return jobs, errors.Join(errs...)
}

// notFoundOr says plainly that a TFJob does not exist.
func notFoundOr(err error, namespace, name string) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("TFJob %q not found in namespace %s", name, namespace)
	}
	return fmt.Errorf("getting TFJob %s/%s: %w", namespace, name, err)
}

func printGet(ctx context.Context, out io.Writer, k *kube, jobs []kubeflowv1.TFJob, output string, allNamespaces, single bool) error {
	switch output {
	case outputYAML, outputJSON, outputName:
		return printJobs(out, output, jobs, single)
	}
	namespace := k.namespace
	if allNamespaces {
		namespace = ""
	}
	pods, err := listJobPods(ctx, k.client, namespace)
	if err != nil {
		return err
	}
	return renderJobTable(out, jobs, pods, tableOptions{wide: output == outputWide, namespace: allNamespaces}, time.Now())
}

// tableOptions are the columns `get` adds.
type tableOptions struct {
	wide      bool // the reported step, per-type replicas, priority class, nodes
	namespace bool // a NAMESPACE column, under -A
}

// renderJobTable writes the table of `get`.
func renderJobTable(out io.Writer, jobs []kubeflowv1.TFJob, pods jobPods, opts tableOptions, now time.Time) error {
	w := newTable(out)
	header := []string{"NAME", "STATE", "REPLICAS", "RESTARTS", "DISRUPTIONS", "CHECKPOINT", "AGE", "WAITING"}
	if opts.wide {
		header = append(header, "STEP", "TYPES", "PRIORITY-CLASS", "NODES")
	}
	if opts.namespace {
		header = append([]string{"NAMESPACE"}, header...)
	}
	fmt.Fprintln(w, strings.Join(header, "\t"))
	for i := range jobs {
		job := &jobs[i]
		row := jobRow(job, pods.of(job), opts.wide, now)
		if opts.namespace {
			row = append([]string{job.Namespace}, row...)
		}
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	// Why a paused job waits, and until when, is a sentence: below the
	// table rather than in a column.
	for i := range jobs {
		if why, ok := pausedByLoan(&jobs[i]); ok {
			if _, err := fmt.Fprintf(out, "%s/%s is paused: it %s\n", jobs[i].Namespace, jobs[i].Name, why); err != nil {
				return err
			}
		}
	}
	return nil
}

// jobRow is one job's cells of the table.
func jobRow(job *kubeflowv1.TFJob, pods []corev1.Pod, wide bool, now time.Time) []string {
	ready := 0
	nodes := map[string]bool{}
	readyByType := map[string]int{}
	for i := range pods {
		if podReady(&pods[i]) {
			ready++
			readyByType[pods[i].Labels[kubeflowv1.ReplicaTypeLabel]]++
		}
		if n := pods[i].Spec.NodeName; n != "" && pods[i].DeletionTimestamp == nil {
			nodes[n] = true
		}
	}
	row := []string{
		job.Name,
		stateOf(job),
		fmt.Sprintf("%d/%d", ready, job.TotalReplicas()),
		fmt.Sprint(jobRestarts(job, pods)),
		fmt.Sprint(job.Status.Disruptions),
		checkpointAge(job, now),
		age(job.CreationTimestamp, now),
		waitingFor(job),
	}
	if !wide {
		return row
	}
	var types []string
	for _, rtype := range replicaTypes(job) {
		lower := strings.ToLower(string(rtype))
		types = append(types, fmt.Sprintf("%s:%d/%d", rtype, readyByType[lower], job.Spec.TFReplicaSpecs[rtype].ReplicaCount()))
	}
	return append(row, reportedStep(job), strings.Join(types, ","), orNone(priorityClassShown(job, pods)), fmt.Sprint(len(nodes)))
}
