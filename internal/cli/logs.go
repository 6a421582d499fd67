package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// logsOptions are the flags of logs.
type logsOptions struct {
	replica     string
	container   string
	follow      bool
	previous    bool
	timestamps  bool
	tail        int64
	allReplicas bool
}

func newLogsCommand() *cobra.Command {
	var o logsOptions
	cmd := &cobra.Command{
		Use:   "logs JOB",
		Short: "Print the logs of a TFJob's replica (the chief, else worker 0) or of all of them",
		Example: `  backfill logs mnist
  backfill logs mnist --replica worker-1 -f
  backfill logs mnist --all-replicas --tail 20`,
	}
	kf := addKubeFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.replica, "replica", "", "the replica to show, TYPE-INDEX (worker-1, ps-0); default the chief or master, else worker-0")
	f.StringVarP(&o.container, "container", "c", kubeflowv1.ContainerName, "the container of the pod")
	f.BoolVarP(&o.follow, "follow", "f", false, "keep streaming new lines")
	f.BoolVarP(&o.previous, "previous", "p", false, "the log of the previous, crashed container")
	f.BoolVar(&o.timestamps, "timestamps", false, "start each line with its timestamp")
	f.Int64Var(&o.tail, "tail", -1, "only the last N lines (-1: all)")
	f.BoolVar(&o.allReplicas, "all-replicas", false, "every replica's log, each line prefixed with [TYPE-INDEX]")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageError{errors.New("logs takes exactly one TFJob name: backfill logs JOB")}
		}
		if o.allReplicas && o.replica != "" {
			return usageError{errors.New("--replica and --all-replicas exclude each other: pick one")}
		}
		if o.tail < -1 {
			return usageError{fmt.Errorf("--tail %d: give a number of lines, or -1 for all", o.tail)}
		}
		k, err := kf.connect()
		if err != nil {
			return err
		}
		return o.run(cmd.Context(), k, args[0], cmd.OutOrStdout())
	}
	return cmd
}

func (o *logsOptions) run(ctx context.Context, k *kube, name string, out io.Writer) error {
	var job kubeflowv1.TFJob
	if err := k.client.Get(ctx, client.ObjectKey{Namespace: k.namespace, Name: name}, &job); err != nil {
		return notFoundOr(err, k.namespace, name)
	}
	var list corev1.PodList
	if err := k.client.List(ctx, &list, client.InNamespace(job.Namespace), client.MatchingLabels{
		kubeflowv1.OperatorNameLabel: kubeflowv1.OperatorName, kubeflowv1.JobNameLabel: job.Name,
	}); err != nil {
		return fmt.Errorf("listing the pods of TFJob %s: %w", job.Name, err)
	}
	pods := list.Items
	sortPods(pods)
	if o.allReplicas {
		if len(pods) == 0 {
			return fmt.Errorf("TFJob %s has no pods yet: see `backfill describe %s`", job.Name, job.Name)
		}
		return o.streamAll(ctx, k, pods, out)
	}
	pod, err := pickReplica(&job, pods, o.replica)
	if err != nil {
		return err
	}
	return o.stream(ctx, k, pod, out, "")
}

// pickReplica finds the pod of the replica the user named, or the chief
// (the pod labelled job-role=master) when none is named.
func pickReplica(job *kubeflowv1.TFJob, pods []corev1.Pod, replica string) (*corev1.Pod, error) {
	if replica == "" {
		for i := range pods {
			if pods[i].Labels[kubeflowv1.JobRoleLabel] == kubeflowv1.JobRoleMaster {
				return &pods[i], nil
			}
		}
		replica = defaultReplica(job)
	}
	want := strings.ToLower(replica)
	if !slices.Contains(replicaChoices(job), want) {
		return nil, usageError{fmt.Errorf("TFJob %s has no replica %q: use --replica with one of %s", job.Name, replica, strings.Join(replicaChoices(job), ", "))}
	}
	var found *corev1.Pod
	for i := range pods {
		if replicaName(&pods[i]) == want && (found == nil || found.DeletionTimestamp != nil) {
			found = &pods[i]
		}
	}
	if found == nil {
		return nil, fmt.Errorf("replica %s of TFJob %s has no pod yet: see `backfill describe %s`", want, job.Name, job.Name)
	}
	return found, nil
}

// defaultReplica is the chief or master, else worker 0, else the first
// replica of the spec.
func defaultReplica(job *kubeflowv1.TFJob) string {
	for _, t := range []kubeflowv1.ReplicaType{kubeflowv1.ReplicaTypeChief, kubeflowv1.ReplicaTypeMaster, kubeflowv1.ReplicaTypeWorker} {
		if _, ok := job.Spec.TFReplicaSpecs[t]; ok {
			return strings.ToLower(string(t)) + "-0"
		}
	}
	if choices := replicaChoices(job); len(choices) > 0 {
		return choices[0]
	}
	return "worker-0"
}

func replicaChoices(job *kubeflowv1.TFJob) []string {
	var names []string
	for _, rtype := range replicaTypes(job) {
		for i := range job.Spec.TFReplicaSpecs[rtype].ReplicaCount() {
			names = append(names, fmt.Sprintf("%s-%d", strings.ToLower(string(rtype)), i))
		}
	}
	return names
}

func (o *logsOptions) podLogOptions() *corev1.PodLogOptions {
	opts := &corev1.PodLogOptions{Container: o.container, Follow: o.follow, Previous: o.previous, Timestamps: o.timestamps}
	if o.tail >= 0 {
		opts.TailLines = &o.tail
	}
	return opts
}

// stream copies one pod's log to out, each line after prefix.
func (o *logsOptions) stream(ctx context.Context, k *kube, pod *corev1.Pod, out io.Writer, prefix string) error {
	rc, err := k.clientset.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, o.podLogOptions()).Stream(ctx)
	if err != nil {
		return fmt.Errorf("reading the log of %s (pod %s): %w", replicaName(pod), pod.Name, err)
	}
	defer func() { _ = rc.Close() }()
	if prefix == "" {
		_, err = io.Copy(out, rc)
	} else {
		err = copyLines(out, rc, prefix)
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("reading the log of %s (pod %s): %w", replicaName(pod), pod.Name, err)
	}
	return nil
}

// streamAll streams every pod's log at once, whole lines, each prefixed
// with its replica; a pod whose log cannot be read is reported and the
// others go on.
func (o *logsOptions) streamAll(ctx context.Context, k *kube, pods []corev1.Pod, out io.Writer) error {
	lw := &lockedWriter{w: out}
	var wg sync.WaitGroup
	errs := make([]error, len(pods))
	for i := range pods {
		wg.Go(func() { errs[i] = o.stream(ctx, k, &pods[i], lw, "["+replicaName(&pods[i])+"] ") })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// copyLines copies r to w line by line, each line after prefix.
func copyLines(w io.Writer, r io.Reader, prefix string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if _, err := io.WriteString(w, prefix+sc.Text()+"\n"); err != nil {
			return err
		}
	}
	return sc.Err()
}

// lockedWriter keeps concurrent lines whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
