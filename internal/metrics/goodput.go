package metrics

import (
	"time"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/progress"
)

// The per-TFJob training gauges' names: the goodput account and the
// progress training code reports (status.goodput, status.progress).
const (
	NameJobGoodput        = "backfill_tfjob_goodput_seconds"
	NameJobCheckpointTime = "backfill_tfjob_checkpoint_timestamp_seconds"
	NameJobProgressStep   = "backfill_tfjob_progress_step"
)

// The values of backfill_tfjob_goodput_seconds's cause label. They are
// spelled here rather than taken from progress.Phase: a phase is where a
// job's time goes now, a cause where it went, and progress_lost is no
// phase at all; renaming a phase must not rename a series.
const (
	GoodputProductive   = "productive"
	GoodputProgressLost = "progress_lost"
	GoodputRecovery     = "recovery"
	GoodputWaiting      = "waiting"
)

// GoodputCauses are the values of backfill_tfjob_goodput_seconds's cause
// label: every job has one series of each, zeros included, so that a sum
// over causes is the job's whole life.
var GoodputCauses = []string{GoodputProductive, GoodputProgressLost, GoodputRecovery, GoodputWaiting}

// trainingDescs are the descriptors of the training gauges, part of the
// per-TFJob state collector.
type trainingDescs struct {
	goodput, checkpoint, step gaugeFamily
}

func newTrainingDescs() trainingDescs {
	return trainingDescs{
		goodput: newGaugeFamily(NameJobGoodput,
			"Seconds of a TFJob's life by cause: productive (training that kept its progress), progress_lost (training a disruption, restart or suspension undid back to the last checkpoint), recovery (from a disruption until every replica ran again), waiting (for capacity before it first ran). Brought up to the scrape from status.goodput; the causes add up to the job's age, frozen once it finished.",
			"namespace", "tfjob", "cause"),
		checkpoint: newGaugeFamily(NameJobCheckpointTime,
			"Unix time at which a TFJob's training code last reported a durable checkpoint (status.progress.checkpointTime); absent while it reported none.",
			"namespace", "tfjob"),
		step: newGaugeFamily(NameJobProgressStep,
			"The last training step a TFJob's training code reported (status.progress.step); absent while it reported none.",
			"namespace", "tfjob"),
	}
}

func (d trainingDescs) all() []gaugeFamily {
	return []gaugeFamily{d.goodput, d.checkpoint, d.step}
}

// collect sends a job's training series through gauge, which adds the
// job's namespace and name. The goodput account is brought up to now the
// way readers of the status do (progress.TotalsAt): the controller writes
// it only when what the job's time goes to changes, so the status alone
// would show a running job's productive time frozen at its last start.
func (d trainingDescs) collect(job *kubeflowv1.TFJob, now time.Time, gauge func(gaugeFamily, float64, ...string)) {
	t := progress.TotalsAt(&job.Status, job.CreationTimestamp.Time, now)
	gauge(d.goodput, t.Productive.Seconds(), GoodputProductive)
	gauge(d.goodput, t.ProgressLost.Seconds(), GoodputProgressLost)
	gauge(d.goodput, t.Recovery.Seconds(), GoodputRecovery)
	gauge(d.goodput, t.Waiting.Seconds(), GoodputWaiting)
	p := job.Status.Progress
	if p == nil {
		return
	}
	gauge(d.step, float64(p.Step))
	if p.CheckpointTime != nil {
		gauge(d.checkpoint, unixSeconds(p.CheckpointTime.UnixMilli()))
	}
}
