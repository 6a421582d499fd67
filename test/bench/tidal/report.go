package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
)

// printModel prints what the run simulates, so that a table is never read
// without its assumptions.
func printModel(out io.Writer, cfg config) {
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	s := cfg.tide
	p("\n== GPU tide: %d GPUs x %d days from %s at %s steps, seeds %s ==", cfg.gpus, cfg.days, cfg.start.Format("2006-01-02 15:04 MST"), cfg.step, cfg.seedList)
	p("online:   KEDA cron triggers (Europe/Berlin), %d GPUs a pod, %d pods outside them:", gpusPerPod, inferenceFloor)
	for _, tr := range inference {
		p("          %s - %s = %d pods", tr.Start, tr.End, tr.DesiredReplicas)
	}
	p("noise:    every scale-up up to %s early, every scale-down up to %s late; %.1f unplanned spikes a day of 1-4 pods for 15-90 min", cfg.early, cfg.late, cfg.spikesPerDay)
	p("training: %d jobs waiting, %.0f a day arriving, 1-8 GPUs as a gang, 2-24 h of work, checkpoints of 1-10 min (each ±20%%) every 15-60 min", cfg.backlog, cfg.jobsPerDay)
	p("stops:    priority: online pods preempt the latest started jobs at once, grace %s, work since the last checkpoint lost;", cfg.grace)
	p("          reactive (Katalyst's tide controller): every %s, jobs evicted at once for online pods pending since the last period, grace %s;", cfg.reactivePeriod, cfg.grace)
	p("          loans: tide.Returns/Admit every %s over a %s forecast, lead %s, notice = checkpoint x %d%% + %s (unmeasured: %s), min loan %s;",
		cfg.evaluate, cfg.horizon, s.Lead, 100+s.CheckpointMarginPercent, s.CheckpointSlack, s.DefaultCheckpointTime, s.MinLoan)
	p("          a noticed job checkpoints and stops, or is stopped at its deadline; the scheduler's preemption still serves spikes")
	p("counted:  training GPU-hours (held, checkpoints included), lost (work since the last checkpoint at a stop, x GPUs), online pods' seconds")
	p("          from creation to a GPU, missed returns: online pods that waited for a GPU training held")
	p("")
}

// printTable prints every policy's seeds and median.
func printTable(out io.Writer, rows map[policy][]summary) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tseed\ttraining GPU-h\tof idle\tlost GPU-h\tlost %\tscheduled wait s p50/p99/max\tspike wait s p50/p99/max\tmissed returns sched/spike\tpreempted\tnoticed\tcheckpointed\tkilled at deadline\t")
	for _, pol := range policies {
		for _, s := range append(append([]summary(nil), rows[pol]...), median(rows[pol])) {
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1f%%\t%.1f\t%.2f\t%.0f/%.0f/%.0f\t%.0f/%.0f/%.0f\t%d/%d\t%d\t%d\t%d\t%d\t\n",
				s.Policy, s.Seed, s.TrainingGPUHours, 100*s.TrainingGPUHours/s.IdleGPUHours, s.LostGPUHours, s.LostPercent,
				s.ScheduledWaitP50, s.ScheduledWaitP99, s.ScheduledWaitMax, s.SpikeWaitP50, s.SpikeWaitP99, s.SpikeWaitMax,
				s.MissedOnSchedule, s.MissedOnSpikes, s.Preemptions, s.Notices, s.CheckpointedReturns, s.DeadlineKills)
		}
	}
	_ = tw.Flush() // the terminal: nothing to do if it fails
}

// target is one of the targets, checked on every seed.
type target struct {
	about string
	met   func(loans, prio summary) bool
	show  func(loans, prio summary) string
}

var targets = []target{
	{"loans use >= 90% of the idle GPU-hours priority preemption uses",
		func(l, p summary) bool { return l.TrainingGPUHours >= 0.9*p.TrainingGPUHours },
		func(l, p summary) string { return fmt.Sprintf("%.1f%%", 100*l.TrainingGPUHours/p.TrainingGPUHours) }},
	{"loans lose <= 1% of training GPU-hours",
		func(l, _ summary) bool { return l.LostPercent <= 1 },
		func(l, p summary) string {
			return fmt.Sprintf("%.2f%% (priority %.2f%%)", l.LostPercent, p.LostPercent)
		}},
	{"online waits 0 s at p99 on scheduled scale-ups under loans",
		func(l, _ summary) bool { return l.ScheduledWaitP99 == 0 },
		func(l, _ summary) string {
			return fmt.Sprintf("%.0f s (max %.0f s)", l.ScheduledWaitP99, l.ScheduledWaitMax)
		}},
	{"online waits on unplanned spikes no longer than under priority (p99 and max)",
		func(l, p summary) bool { return l.SpikeWaitP99 <= p.SpikeWaitP99 && l.SpikeWaitMax <= p.SpikeWaitMax },
		func(l, p summary) string {
			return fmt.Sprintf("%.0f/%.0f s (priority %.0f/%.0f s)", l.SpikeWaitP99, l.SpikeWaitMax, p.SpikeWaitP99, p.SpikeWaitMax)
		}},
}

// printTargets says per target and seed whether it is met.
func printTargets(out io.Writer, rows map[policy][]summary) {
	fmt.Fprintln(out, "\ntargets (every seed):")
	for _, t := range targets {
		all := true
		var shown []string
		for i, l := range rows[loans] {
			p := rows[priority][i]
			ok := t.met(l, p)
			all = all && ok
			shown = append(shown, "seed "+l.Seed+" "+t.show(l, p))
		}
		verdict := "met"
		if !all {
			verdict = "NOT met"
		}
		fmt.Fprintf(out, "  %-7s %s: %s\n", verdict, t.about, joinComma(shown))
	}
}

func joinComma(xs []string) string { return strings.Join(xs, ", ") }

// writeFiles writes every row, seeds and medians, as JSON and CSV.
func writeFiles(dir string, rows map[policy][]summary) error {
	var all []summary
	for _, pol := range policies {
		all = append(append(all, rows[pol]...), median(rows[pol]))
	}
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "runs.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing runs.json: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "runs.csv"))
	if err != nil {
		return fmt.Errorf("writing runs.csv: %w", err)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"policy", "seed", "training_gpu_hours", "idle_gpu_hours", "lost_gpu_hours", "lost_percent",
		"scheduled_wait_p50_s", "scheduled_wait_p99_s", "scheduled_wait_max_s", "spike_wait_p50_s", "spike_wait_p99_s", "spike_wait_max_s",
		"missed_returns_scheduled", "missed_returns_spikes", "preemptions", "notices", "checkpointed_returns", "deadline_kills", "refused_short_loans", "jobs_done"})
	g := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	for _, s := range all {
		_ = w.Write([]string{s.Policy, s.Seed, g(s.TrainingGPUHours), g(s.IdleGPUHours), g(s.LostGPUHours), g(s.LostPercent),
			g(s.ScheduledWaitP50), g(s.ScheduledWaitP99), g(s.ScheduledWaitMax), g(s.SpikeWaitP50), g(s.SpikeWaitP99), g(s.SpikeWaitMax),
			strconv.Itoa(s.MissedOnSchedule), strconv.Itoa(s.MissedOnSpikes), strconv.Itoa(s.Preemptions), strconv.Itoa(s.Notices),
			strconv.Itoa(s.CheckpointedReturns), strconv.Itoa(s.DeadlineKills), strconv.Itoa(s.RefusedShortLoans), strconv.Itoa(s.JobsDone)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		_ = f.Close() // the write error is the one to report
		return fmt.Errorf("writing runs.csv: %w", err)
	}
	return f.Close()
}
