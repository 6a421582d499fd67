package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// level is one online load level of the experiment.
type level struct {
	// target is the share of the node's CPUs the online pod is meant to
	// use; rate and burstRate the requests per second that do.
	target          float64
	rate, burstRate float64
	// window is the measured time of a steady window: long enough for
	// -min-requests.
	window time.Duration
	// offlineCores are the cores the core split gives offline: the ones
	// the online pod alone leaves whole (0: none, no core split).
	offlineCores int
	conds        []condition
}

func (l *level) String() string { return fmt.Sprintf("%.0f%%", 100*l.target) }

// minBurst is the least burst worth measuring, as a multiple of the
// level's rate: where the node holds less, the level has no burst.
const minBurst = 1.5

func (l *level) bursts() bool { return l.burstRate >= minBurst*l.rate }

// round is what one round measured: offline alone, and each level's
// conditions by key.
type round struct {
	offlineAlone *windowResult
	levels       []map[string]*windowResult
}

// job is one window of a round, to run in the round's random order.
type job struct {
	lvl  int // -1: offline alone
	cond condition
}

// runRounds runs every round: each condition of each level once, and
// offline alone, in a random order of its own.
func (b *bench) runRounds(ctx context.Context) ([]round, error) {
	rng := rand.New(rand.NewPCG(b.cfg.seed, 0))
	var rounds []round
	for r := range b.cfg.rounds {
		jobs := []job{{lvl: -1, cond: condition{key: keyOfflineAlone, name: "offline alone", offline: true}}}
		for i, lvl := range b.levels {
			for _, c := range lvl.conds {
				jobs = append(jobs, job{lvl: i, cond: c})
			}
		}
		rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
		rd := round{levels: make([]map[string]*windowResult, len(b.levels))}
		for i := range rd.levels {
			rd.levels[i] = map[string]*windowResult{}
		}
		began := time.Now()
		for n, j := range jobs {
			w, err := b.accepted(ctx, j)
			if err != nil {
				return nil, fmt.Errorf("round %d, %s: %w", r+1, b.jobName(j), err)
			}
			if j.lvl < 0 {
				rd.offlineAlone = w
			} else {
				rd.levels[j.lvl][j.cond.key] = w
			}
			b.progress(r, n, len(jobs), j, w)
		}
		rounds = append(rounds, rd)
		fmt.Printf("round %d of %d done in %s\n", r+1, b.cfg.rounds, time.Since(began).Round(time.Second))
	}
	return rounds, nil
}

func (b *bench) jobName(j job) string {
	if j.lvl < 0 {
		return j.cond.name
	}
	return b.levels[j.lvl].String() + " " + j.cond.name
}

func (b *bench) progress(r, n, of int, j job, w *windowResult) {
	line := fmt.Sprintf("  round %d %2d/%d  %-52s", r+1, n+1, of, b.jobName(j))
	if w.client.requests > 0 {
		line += fmt.Sprintf(" P99 %6.2f ms", ms(w.client.p99))
	}
	if j.cond.offline {
		line += fmt.Sprintf("  offline %.2f cores", w.offline)
	}
	fmt.Println(line)
}

// accepted measures a window until one is undisturbed: a window in which
// something outside the bench used CPU, or the hypervisor stole it, is
// counted by reason and measured again.
func (b *bench) accepted(ctx context.Context, j job) (*windowResult, error) {
	var lvl *level
	if j.lvl >= 0 {
		lvl = b.levels[j.lvl]
	}
	for try := 1; ; try++ {
		w, err := b.measure(ctx, lvl, j.cond)
		if err != nil {
			return nil, err
		}
		reason := b.disturbed(w)
		if reason == "" {
			return w, nil
		}
		b.rejected[reason]++
		fmt.Printf("  rejected (%s: outside %.2f cores, steal %.2f cores), measuring again\n", reason, w.outside, w.steal)
		if try >= b.cfg.maxTries {
			return nil, fmt.Errorf("%d windows in a row were disturbed (%s): the machine is not quiet enough; stop what else runs, or raise -max-outside/-max-steal knowing the result is noisier", try, reason)
		}
	}
}

// The reasons a window is rejected.
const (
	rejectOutside = "outside CPU"
	rejectSteal   = "steal"
	rejectFailed  = "failed requests"
)

func (b *bench) disturbed(w *windowResult) string {
	switch {
	case w.outside > b.cfg.maxOutside:
		return rejectOutside
	case w.steal > b.cfg.maxSteal:
		return rejectSteal
	case w.client.failed > 0:
		return rejectFailed
	}
	return ""
}

// calibrateLevels finds each level's request rate from what a request
// costs the online pod at about that rate, and the rest of its plan.
func (b *bench) calibrateLevels(ctx context.Context) error {
	for _, target := range b.cfg.levels {
		lvl := &level{target: target}
		rate, perRequest, perNode := 200.0, 0.0, 0.0
		var alone *windowResult
		for range 3 {
			lvl.rate, lvl.burstRate, lvl.window = rate, rate, b.cfg.probe
			w, err := b.measure(ctx, lvl, condition{key: keyAlone})
			if err != nil {
				return fmt.Errorf("calibrating the %.0f%% level: %w", 100*target, err)
			}
			if w.client.requests == 0 || w.online <= 0 {
				return fmt.Errorf("calibrating the %.0f%% level: the online service served nothing", 100*target)
			}
			// Cores per (request per second), over the requests the
			// service read in the window: where it fell behind, fewer
			// than were sent.
			served := float64(w.server.requests) / w.elapsed.Seconds()
			if served <= 0 {
				return fmt.Errorf("calibrating the %.0f%% level: the online service served nothing", 100*target)
			}
			perRequest = w.online / served
			// What a request costs the node: the online pod, the load
			// generator and the loopback's interrupts.
			perNode = (w.online + w.loadgen + w.irq) / served
			rate = math.Round(target * float64(b.cpus) / perRequest)
			alone = w
		}
		lvl.rate = rate
		burstCap := math.Floor(b.cfg.burstCap * float64(b.cpus) / perNode)
		lvl.burstRate = min(rate*b.cfg.burstFactor, max(burstCap, rate))
		lvl.window = max(b.cfg.minWindow, time.Duration(float64(b.cfg.minRequests)/rate*float64(time.Second)).Round(time.Second))
		lvl.offlineCores = max(0, b.cpus-int(math.Ceil(alone.online)))
		lvl.conds = b.conditions(lvl)
		b.levels = append(b.levels, lvl)
		burst := fmt.Sprintf("burst to %.0f/s (×%.2f)", lvl.burstRate, lvl.burstRate/lvl.rate)
		if !lvl.bursts() {
			burst = fmt.Sprintf("no burst: the node holds at most ×%.2f (-burst-cap)", lvl.burstRate/lvl.rate)
		}
		fmt.Printf("level %s: %.0f requests/s (%.0f µs of the online pod's CPU each, %.0f µs of the node's), window %s; %s; %d core(s) left whole for offline\n",
			lvl, lvl.rate, perRequest*1e6, perNode*1e6, lvl.window, burst, lvl.offlineCores)
	}
	return nil
}

// estimate is how long the rounds take, roughly.
func (b *bench) estimate() time.Duration {
	per := b.cfg.settle + b.cfg.offlineAlone
	for _, l := range b.levels {
		for _, c := range l.conds {
			p, _ := b.plan(l, c)
			per += p.length + 2*time.Second
		}
	}
	return time.Duration(b.cfg.rounds) * per
}

// parseLevels reads -levels: percents of the node's CPUs.
func parseLevels(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v <= 0 || v >= 100 {
			return nil, fmt.Errorf("-levels=%q: %q is not a percent of the node's CPUs between 0 and 100", s, f)
		}
		out = append(out, v/100)
	}
	slices.Sort(out)
	return out, nil
}
