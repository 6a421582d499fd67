package progress

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// Phase is what a job's time is going to.
type Phase string

// The phases of a job's time, each a cause of the goodput account.
const (
	// Waiting: for capacity, before the job first ran (or while queued).
	Waiting Phase = "waiting"
	// Running: every replica runs; the time is productive until a
	// disruption undoes it back to the last checkpoint.
	Running Phase = "productive"
	// Recovering: from a disruption or restart until every replica runs.
	Recovering Phase = "recovery"
	// Done: the job succeeded or failed; its account is closed.
	Done Phase = "done"
)

// PhaseOf is the phase a job's status puts it in.
func PhaseOf(st *kubeflowv1.JobStatus) Phase {
	switch {
	case hasTrue(st, kubeflowv1.JobSucceeded) || hasTrue(st, kubeflowv1.JobFailed):
		return Done
	case st.Goodput != nil && st.Goodput.RunningSince != nil:
		return Running
	case st.Disruptions+st.Restarts > 0:
		return Recovering
	}
	return Waiting
}

func hasTrue(st *kubeflowv1.JobStatus, ctype kubeflowv1.JobConditionType) bool {
	for _, c := range st.Conditions {
		if c.Type == ctype && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// Pass is what a pass of the controller saw that goodput follows, beside
// the status it writes.
type Pass struct {
	// AllRunning: every replica that should run does.
	AllRunning bool
	// Suspended: the pass suspended the job, an interruption as a
	// disruption or restart it counts is.
	Suspended bool
}

// Account brings the goodput of a pass's new status after up to now, when
// the pass changes what the job's time goes to: the time since the last
// account goes to the phase the old status before was in; an interruption
// (a disruption or restart counted by the pass, or a suspension) moves the
// progress since the last checkpoint (or since the job last started
// running) from productive to lost; and runningSince follows whether every
// replica runs now. Between such passes nothing is written: readers
// extrapolate with TotalsAt.
func Account(before, after *kubeflowv1.JobStatus, created, now time.Time, pass Pass) {
	// To the second, as the apiserver stores it: a finer time would make
	// two passes in one second differ in a status that reads back equal.
	now = now.Truncate(time.Second)
	was := PhaseOf(before)
	ended := pass.Suspended || after.Disruptions+after.Restarts > before.Disruptions+before.Restarts
	if was == Done || (before.Goodput != nil && !ended && (was == Running) == pass.AllRunning && PhaseOf(after) != Done) {
		return
	}
	g := &kubeflowv1.Goodput{AccountedTime: metav1.NewTime(created)}
	if before.Goodput != nil {
		g = before.Goodput.DeepCopy()
	}
	add(g, was, now.Sub(g.AccountedTime.Time))
	if ended && was == Running {
		lost := min(now.Sub(atRisk(g, after.Progress)), time.Duration(g.ProductiveSeconds)*time.Second)
		g.ProductiveSeconds -= seconds(lost)
		g.ProgressLostSeconds += seconds(lost)
	}
	g.AccountedTime = metav1.NewTime(now)
	g.RunningSince = nil
	if pass.AllRunning && !ended {
		g.RunningSince = &g.AccountedTime
	}
	after.Goodput = g
}

// atRisk is when the progress a disruption undoes began: the last
// checkpoint, or when the job last started running.
func atRisk(g *kubeflowv1.Goodput, p *kubeflowv1.Progress) time.Time {
	since := g.AccountedTime.Time
	if g.RunningSince != nil {
		since = g.RunningSince.Time
	}
	if p != nil && p.CheckpointTime != nil && p.CheckpointTime.After(since) {
		return p.CheckpointTime.Time
	}
	return since
}

func add(g *kubeflowv1.Goodput, phase Phase, d time.Duration) {
	if d <= 0 {
		return
	}
	switch phase {
	case Running:
		g.ProductiveSeconds += seconds(d)
	case Recovering:
		g.RecoverySeconds += seconds(d)
	case Waiting:
		g.WaitingSeconds += seconds(d)
	}
}

func seconds(d time.Duration) int64 { return int64(d.Round(time.Second) / time.Second) }

// Totals is a job's account brought up to now without writing it: the
// time since the last account goes to the phase the job is in.
type Totals struct {
	Productive, ProgressLost, Recovery, Waiting time.Duration
}

// TotalsAt is the account of a job created at created, whose status is st,
// as of now.
func TotalsAt(st *kubeflowv1.JobStatus, created, now time.Time) Totals {
	g := &kubeflowv1.Goodput{AccountedTime: metav1.NewTime(created)}
	if st.Goodput != nil {
		g = st.Goodput.DeepCopy()
	}
	add(g, PhaseOf(st), now.Sub(g.AccountedTime.Time))
	sec := func(n int64) time.Duration { return time.Duration(n) * time.Second }
	return Totals{Productive: sec(g.ProductiveSeconds), ProgressLost: sec(g.ProgressLostSeconds), Recovery: sec(g.RecoverySeconds), Waiting: sec(g.WaitingSeconds)}
}

// Ratio is the share of the job's time that was productive, 0 to 1; 0
// for a job with no time yet.
func (t Totals) Ratio() float64 {
	all := t.Productive + t.ProgressLost + t.Recovery + t.Waiting
	if all <= 0 {
		return 0
	}
	return float64(t.Productive) / float64(all)
}

// Merge is a status's progress with what was reported since: the later
// report wins, and the later checkpoint; in the same second the reported
// one, since the store holds the newest.
func Merge(status, reported *kubeflowv1.Progress) *kubeflowv1.Progress {
	switch {
	case reported == nil:
		return status
	case status == nil:
		return reported.DeepCopy()
	}
	out := status.DeepCopy()
	if !reported.ReportTime.Before(&out.ReportTime) {
		out.Step, out.Epoch, out.ReportTime = reported.Step, reported.Epoch, reported.ReportTime
	}
	if reported.CheckpointTime != nil && (out.CheckpointTime == nil || !reported.CheckpointTime.Before(out.CheckpointTime)) {
		out.CheckpointStep, out.CheckpointTime = reported.CheckpointStep, reported.CheckpointTime
	}
	return out
}
