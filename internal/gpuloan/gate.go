package gpuloan

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/tide"
)

// Gate holds a new TFJob that asks for GPUs only lent ones can give (every
// pool it fits has a forecast) until a loan lasts long enough for it to
// reach a checkpoint and write one (tide.Admit): a job started on GPUs
// online work wants back within minutes loses what it did, and the GPUs
// drain late. The TFJob controller asks it before a job's first pods; the
// GPU loan controller gives it its pools at every decision. Jobs Kueue
// manages and jobs in a pool without a forecast are never held.
type Gate struct {
	mu       sync.Mutex
	settings Settings
	// pools are those of the last decision, nil before the first: until
	// then no job is held.
	pools map[string]gatePool
	// admitted are the jobs let through whose pods are not bound yet:
	// their GPUs are spoken for in the pool that admitted them.
	admitted map[string]admittedJob
}

// gatePool is a pool as the last decision saw it.
type gatePool struct {
	// managed: the pool has a forecast, so its free GPUs are lent.
	managed bool
	pool    tide.Pool
}

type admittedJob struct {
	pool string
	loan tide.Loan
}

// NewGate is a gate for the decisions of settings.
func NewGate(settings Settings) *Gate {
	return &Gate{settings: settings, admitted: map[string]admittedJob{}}
}

// decided records a decision's pools. The jobs admitted before it whose
// pods it found bound (bound: their loans, by job), or that waited longer
// than two decisions and a minute, are no longer spoken for.
func (g *Gate) decided(pools map[string]gatePool, bound map[string]bool, now time.Time) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pools = pools
	expiry := 2*g.settings.Interval + time.Minute
	for key, a := range g.admitted {
		if bound[key] || now.Sub(a.loan.Started) > expiry {
			delete(g.admitted, key)
		}
	}
}

// Hold says why a new job must wait for a longer loan, "" when it may
// start; retry is when to ask again. A job it lets through is counted in
// its pool until its pods are bound.
func (g *Gate) Hold(job *kubeflowv1.TFJob, now time.Time) (why string, retry time.Duration) {
	if leftToKueue(job) {
		return "", 0
	}
	gpus, pl := jobGPUs(job)
	if gpus == 0 {
		return "", 0
	}
	key := job.Namespace + "/" + job.Name
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pools == nil {
		return "", 0
	}
	var fitting []string
	for name, p := range g.pools {
		if !pl.fits(name) {
			continue
		}
		if !p.managed {
			return "", 0 // GPUs no forecast claims: not a loan
		}
		fitting = append(fitting, name)
	}
	sort.Strings(fitting)
	var whys []string
	for _, name := range fitting {
		p := g.withAdmitted(name, key)
		a := tide.Admit(now, p, g.settings.Tide, tide.Request{GPUs: gpus})
		if a.OK {
			g.admitted[key] = admittedJob{pool: name, loan: tide.Loan{Job: key, GPUs: gpus, Started: now}}
			return "", 0
		}
		whys = append(whys, g.shortLoan(name, p, a, gpus, now))
	}
	if len(whys) == 0 {
		return "", 0 // no pool fits: the scheduler says why
	}
	return fmt.Sprintf("waits for a GPU loan long enough to reach a checkpoint (%s of work and %s to write it): %s",
		g.settings.Tide.MinLoan, g.settings.Tide.NoticeLead(0), strings.Join(whys, "; ")), g.settings.Interval
}

// withAdmitted is the pool with the loans of the jobs admitted into it
// since, other than key's.
func (g *Gate) withAdmitted(name, key string) tide.Pool {
	p := g.pools[name].pool
	p.Loans = append([]tide.Loan(nil), p.Loans...)
	for k, a := range g.admitted {
		if a.pool == name && k != key {
			p.Loans = append(p.Loans, a.loan)
		}
	}
	return p
}

// shortLoan says why a pool cannot lend gpus for long enough now, in words
// that change only with the decision, and when it next can.
func (g *Gate) shortLoan(name string, p tide.Pool, a tide.Admission, gpus int, now time.Time) string {
	why := fmt.Sprintf("pool %s lends its free GPUs only until %s", name, readable(a.Until))
	if !a.Until.After(now) {
		why = fmt.Sprintf("pool %s has fewer than %d GPUs free to lend", name, gpus)
	}
	next := tide.NextLoan(now, now, p, g.settings.Tide, gpus)
	if next.IsZero() {
		return why + ", and no loan long enough is in sight within the forecast"
	}
	return why + ", next loan from ~" + readable(next)
}

// jobGPUs is what a job's pods ask of nvidia.com/gpu together, and the
// pools every GPU replica may run in.
func jobGPUs(job *kubeflowv1.TFJob) (int, placement) {
	total := 0
	var pl placement
	for _, spec := range job.Spec.TFReplicaSpecs {
		if spec == nil {
			continue
		}
		per := gpusOf(&corev1.Pod{Spec: spec.Template.Spec})
		if per == 0 {
			continue
		}
		replicas := int32(1)
		if spec.Replicas != nil {
			replicas = *spec.Replicas
		}
		total += per * int(replicas)
		pl = pl.and(placementOf(&spec.Template.Spec))
	}
	return total, pl
}
