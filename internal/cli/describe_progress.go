package cli

import (
	"fmt"
	"io"
	"math"
	"time"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	jobprogress "github.com/backfill-dev/backfill/internal/progress"
)

// assumedSaveTime is the time a checkpoint takes to save, as the
// checkpoint hint assumes it: training code reports when a checkpoint is
// durable, not how long writing it took.
const assumedSaveTime = 30 * time.Second

// checkpointAge is the age of the job's last durable checkpoint, as get's
// CHECKPOINT column shows it; "<none>" when none was reported.
func checkpointAge(job *kubeflowv1.TFJob, now time.Time) string {
	p := job.Status.Progress
	if p == nil || p.CheckpointTime == nil {
		return "<none>"
	}
	return age(*p.CheckpointTime, now)
}

// reportedStep is the last step the training code reported, as get's
// STEP column shows it; "<none>" before the first report.
func reportedStep(job *kubeflowv1.TFJob) string {
	if job.Status.Progress == nil {
		return "<none>"
	}
	return fmt.Sprint(job.Status.Progress.Step)
}

// writeProgress shows what the training code last reported: its step and
// epoch, and its last durable checkpoint.
func writeProgress(w io.Writer, d *description, now time.Time) {
	fmt.Fprintln(w, "Progress:")
	p := d.job.Status.Progress
	if p == nil {
		fmt.Fprintln(w, "  <none>: the training code has not reported; it POSTs its step to $BACKFILL_REPORT_URL (see docs/colocation.md)")
		return
	}
	step := fmt.Sprint(p.Step)
	if p.Epoch != nil {
		step += fmt.Sprintf(", epoch %d", *p.Epoch)
	}
	fmt.Fprintf(w, "  Step:\t%s, reported %s ago\n", step, age(p.ReportTime, now))
	if p.CheckpointTime == nil {
		fmt.Fprintln(w, "  Checkpoint:\t<none> reported: a disruption undoes all training since the job last started running")
		return
	}
	checkpoint := "step <unknown>"
	if p.CheckpointStep != nil {
		checkpoint = fmt.Sprintf("step %d", *p.CheckpointStep)
	}
	fmt.Fprintf(w, "  Checkpoint:\t%s, %s ago\n", checkpoint, age(*p.CheckpointTime, now))
}

// writeGoodput shows the job's goodput account brought up to now: the
// productive share of its time and where the rest went, and, once the job
// has been disrupted, how often it should checkpoint.
func writeGoodput(w io.Writer, d *description, now time.Time) {
	st := &d.job.Status
	if st.Goodput == nil && len(st.Conditions) > 0 {
		fmt.Fprintln(w, "Goodput:\t<none>: the manager keeps no account of this job's time (status.goodput is empty)")
		return
	}
	t := jobprogress.TotalsAt(st, d.job.CreationTimestamp.Time, now)
	total := t.Productive + t.ProgressLost + t.Recovery + t.Waiting
	if total <= 0 {
		fmt.Fprintln(w, "Goodput:\t<none>: no time accounted yet")
		return
	}
	fmt.Fprintf(w, "Goodput:\t%.0f%% of the job's %s was productive\n", 100*t.Ratio(), span(total))
	fmt.Fprintf(w, "  Productive:\t%s\n", span(t.Productive))
	fmt.Fprintf(w, "  Progress Lost:\t%s\tundone by disruptions, restarts and suspensions, back to the last checkpoint\n", span(t.ProgressLost))
	fmt.Fprintf(w, "  Recovery:\t%s\tfrom such an interruption until every replica ran again\n", span(t.Recovery))
	fmt.Fprintf(w, "  Waiting:\t%s\tfor capacity before the job first ran\n", span(t.Waiting))
	if h, ok := hintFor(t, st.Disruptions, assumedSaveTime); ok {
		fmt.Fprintf(w, "  Hint:\t%s\n", h)
	}
}

// checkpointHint is the checkpoint interval that loses the least time to
// disruptions, by Young and Daly's first-order formula
//
//	interval = sqrt(2 × save time × mean time between disruptions)
//
// where the mean time between disruptions is the job's running time
// (productive + progress lost) over its disruptions.
type checkpointHint struct {
	save, mtbd, interval time.Duration
	productive, lost     time.Duration
	disruptions          int32
}

// hintFor is the hint for a job whose account is t and which was disrupted
// disruptions times, assuming a checkpoint takes save; ok is false before
// the first disruption, or while the job has not run at all.
func hintFor(t jobprogress.Totals, disruptions int32, save time.Duration) (checkpointHint, bool) {
	running := t.Productive + t.ProgressLost
	if disruptions < 1 || running <= 0 || save <= 0 {
		return checkpointHint{}, false
	}
	mtbd := running / time.Duration(disruptions)
	return checkpointHint{
		save: save, mtbd: mtbd, interval: youngDaly(save, mtbd),
		disruptions: disruptions, productive: t.Productive, lost: t.ProgressLost,
	}, true
}

// youngDaly is sqrt(2 × save × mtbd).
func youngDaly(save, mtbd time.Duration) time.Duration {
	return time.Duration(math.Sqrt(2*save.Seconds()*mtbd.Seconds()) * float64(time.Second))
}

func (h checkpointHint) String() string {
	noun := "disruptions"
	if h.disruptions == 1 {
		noun = "disruption"
	}
	return fmt.Sprintf("checkpoint every %s if a save takes %s (Young/Daly: sqrt(2 × save × MTBD) = sqrt(2 × %s × %s)); "+
		"MTBD, the mean time between disruptions, is (%s productive + %s lost) / %d %s",
		span(h.interval), span(h.save), span(h.save), span(h.mtbd), span(h.productive), span(h.lost), h.disruptions, noun)
}

// span writes a duration for a reader: "45s", "4m20s", "12m", "2h15m",
// "3d4h"; coarser as it grows, as a reader rounds.
func span(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", d/time.Second)
	case d < 10*time.Minute:
		m, s := d/time.Minute, (d%time.Minute)/time.Second
		if s == 0 {
			return fmt.Sprintf("%dm", m)
		}
		return fmt.Sprintf("%dm%ds", m, s)
	case d < time.Hour-30*time.Second:
		return fmt.Sprintf("%dm", d.Round(time.Minute)/time.Minute)
	case d < 48*time.Hour-30*time.Second:
		d = d.Round(time.Minute)
		h, m := d/time.Hour, (d%time.Hour)/time.Minute
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	d = d.Round(time.Hour)
	days, h := d/(24*time.Hour), (d%(24*time.Hour))/time.Hour
	if h == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, h)
}
