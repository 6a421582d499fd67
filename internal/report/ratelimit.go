package report

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
)

// Each pod may report reportsPerSecond on average with bursts of
// reportBurst: far more than progress needs (a report every few seconds
// is plenty), and little enough that a runaway loop in training code
// cannot keep the manager or the apiserver busy.
const (
	reportsPerSecond = 2
	reportBurst      = 10
	// limiterIdle: a pod silent this long is forgotten. Its limiter was
	// full again long before (reportBurst/reportsPerSecond = 5 s), so
	// forgetting it forgives nothing.
	limiterIdle = time.Minute
)

// podLimits are the rate limits of the pods that reported lately, by UID:
// a recreated pod is a new pod.
type podLimits struct {
	mu    sync.Mutex
	pods  map[types.UID]*podLimit
	swept time.Time
}

type podLimit struct {
	limiter *rate.Limiter
	last    time.Time
}

func newPodLimits() *podLimits { return &podLimits{pods: map[types.UID]*podLimit{}} }

// allow takes one report of pod at now from its limit, if it has one left.
func (l *podLimits) allow(pod types.UID, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	p := l.pods[pod]
	if p == nil {
		p = &podLimit{limiter: rate.NewLimiter(reportsPerSecond, reportBurst)}
		l.pods[pod] = p
	}
	p.last = now
	return p.limiter.AllowN(now, 1)
}

// sweep forgets the pods idle for limiterIdle, at most once per
// limiterIdle, so that the pods of jobs long gone do not pile up.
func (l *podLimits) sweep(now time.Time) {
	if now.Sub(l.swept) < limiterIdle {
		return
	}
	for uid, p := range l.pods {
		if now.Sub(p.last) >= limiterIdle {
			delete(l.pods, uid)
		}
	}
	l.swept = now
}
