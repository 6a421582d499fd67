package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// What submit --wait-for waits for.
const (
	waitRunning = "running"
	waitDone    = "done"
)

// waitPoll is how often the wait looks at the jobs.
const waitPoll = time.Second

// waitForJobs polls the jobs until each runs (or is done), printing one
// progress line; it fails when a job fails or timeout passes.
func waitForJobs(ctx context.Context, c client.Client, manifests []manifest, until string, timeout time.Duration, out io.Writer) error {
	// The timeout bounds the wait, not each look: a look near the deadline
	// still gets its answer.
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	line := newProgressLine(out)
	defer line.done()
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	var states []progress
	var lastErr error
	for {
		seen, err := jobProgress(ctx, c, manifests)
		var gone jobGone
		switch {
		case errors.As(err, &gone):
			return err
		case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
			// RBAC's refusal stays until someone binds a role: say it
			// now, not at the timeout.
			return err
		case err != nil:
			// A wait may last hours: one refused or lost request (an
			// apiserver restarting, a timeout) is looked at again.
			lastErr = err
		default:
			states, lastErr = seen, nil
			line.show(progressText(states))
			if failed := firstFailed(states); failed != nil {
				return fmt.Errorf("TFJob %s failed: %s", failed.job.Name, failureMessage(failed.job))
			}
			if allReached(states, until) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			if lastErr != nil {
				return fmt.Errorf("timed out after %s waiting for the TFJobs to be %s: %w", timeout, until, lastErr)
			}
			return fmt.Errorf("timed out after %s waiting for the TFJobs to be %s: %s", timeout, until, stillWaiting(states, until))
		case <-tick.C:
		}
	}
}

// jobGone is a job deleted during the wait, which no retry brings back.
type jobGone struct{ error }

// progress is one job and its pods as the wait last saw them.
type progress struct {
	job  *kubeflowv1.TFJob
	pods []corev1.Pod
}

func jobProgress(ctx context.Context, c client.Client, manifests []manifest) ([]progress, error) {
	states := make([]progress, 0, len(manifests))
	for _, m := range manifests {
		var job kubeflowv1.TFJob
		if err := c.Get(ctx, client.ObjectKeyFromObject(m.object), &job); apierrors.IsNotFound(err) {
			return nil, jobGone{fmt.Errorf("TFJob %s/%s was deleted while waiting for it", m.object.GetNamespace(), m.object.GetName())}
		} else if err != nil {
			return nil, fmt.Errorf("getting TFJob %s/%s: %w", m.object.GetNamespace(), m.object.GetName(), err)
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{
			kubeflowv1.OperatorNameLabel: kubeflowv1.OperatorName, kubeflowv1.JobNameLabel: job.Name,
		}); err != nil {
			return nil, fmt.Errorf("listing the pods of TFJob %s: %w", job.Name, err)
		}
		states = append(states, progress{job: &job, pods: pods.Items})
	}
	return states, nil
}

// progressText is the one line of the wait: per job, its state and
// replicas running.
func progressText(states []progress) string {
	parts := make([]string, 0, len(states))
	for _, s := range states {
		running := 0
		for i := range s.pods {
			if s.pods[i].Status.Phase == corev1.PodRunning && s.pods[i].DeletionTimestamp == nil {
				running++
			}
		}
		parts = append(parts, fmt.Sprintf("%s: %s, %d/%d replicas running, %d restarts, %d disruptions",
			s.job.Name, jobState(s.job), running, s.job.TotalReplicas(), jobRestarts(s.job, s.pods), s.job.Status.Disruptions))
	}
	return strings.Join(parts, " | ")
}

func firstFailed(states []progress) *progress {
	for i := range states {
		if c := jobCondition(states[i].job, kubeflowv1.JobFailed); c != nil && c.Status == corev1.ConditionTrue {
			return &states[i]
		}
	}
	return nil
}

func failureMessage(job *kubeflowv1.TFJob) string {
	if c := jobCondition(job, kubeflowv1.JobFailed); c != nil && c.Message != "" {
		return c.Message
	}
	return "see `backfill describe " + job.Name + "`"
}

// reached reports whether the job is where the wait wants it: done, or
// (for running) running or already done.
func reached(job *kubeflowv1.TFJob, until string) bool {
	if isDone(job) {
		return true
	}
	if until == waitDone {
		return false
	}
	c := jobCondition(job, kubeflowv1.JobRunning)
	return c != nil && c.Status == corev1.ConditionTrue
}

func allReached(states []progress, until string) bool {
	for _, s := range states {
		if !reached(s.job, until) {
			return false
		}
	}
	return true
}

// stillWaiting names the jobs not there yet and why their first waiting
// pod waits.
func stillWaiting(states []progress, until string) string {
	var parts []string
	for _, s := range states {
		if reached(s.job, until) {
			continue
		}
		part := s.job.Name + " is " + jobState(s.job)
		for i := range s.pods {
			if why := whyPending(&s.pods[i]); why != "" {
				part += " (" + replicaName(&s.pods[i]) + ": " + why + ")"
				break
			}
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "no answer from the cluster"
	}
	return strings.Join(parts, "; ")
}

// progressLine rewrites one line on a terminal, and elsewhere prints a
// new line only when the text changes.
type progressLine struct {
	out      io.Writer
	terminal bool
	last     string
}

func newProgressLine(out io.Writer) *progressLine {
	f, ok := out.(*os.File)
	terminal := false
	if ok {
		if info, err := f.Stat(); err == nil {
			terminal = info.Mode()&os.ModeCharDevice != 0
		}
	}
	return &progressLine{out: out, terminal: terminal}
}

func (p *progressLine) show(text string) {
	if text == p.last {
		return
	}
	p.last = text
	if p.terminal {
		fmt.Fprint(p.out, "\r\033[K"+text)
		return
	}
	fmt.Fprintln(p.out, text)
}

func (p *progressLine) done() {
	if p.terminal && p.last != "" {
		fmt.Fprintln(p.out)
	}
}
