package reclaim

import (
	"context"
	"fmt"
	"sync"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// promQueries runs the instant queries of a source that reads
// Prometheus, and logs each warning Prometheus gives about them once: a
// steady one would otherwise repeat every pass.
type promQueries struct {
	api    promv1.API
	mu     sync.Mutex
	warned map[string]bool
}

func newPromQueries(api promv1.API) *promQueries {
	return &promQueries{api: api, warned: map[string]bool{}}
}

// instant is the vector an instant query answers at a time.
func (p *promQueries) instant(ctx context.Context, q string, at time.Time) (model.Vector, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, warnings, _, err := p.api.Query(ctx, q, at)
	if err != nil {
		return nil, err
	}
	if fresh := p.unwarned(warnings); len(fresh) > 0 {
		// A warning (a partial answer, say) leaves the answer usable,
		// but says why usage may read oddly.
		log.FromContext(ctx).Info("Prometheus warns about a usage query", "query", q, "warnings", fresh)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("got a %s, want a vector", v.Type())
	}
	return vec, nil
}

// unwarned are the warnings not logged before, now noted as logged.
func (p *promQueries) unwarned(warnings promv1.Warnings) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var fresh []string
	for _, w := range warnings {
		if !p.warned[w] {
			p.warned[w] = true
			fresh = append(fresh, w)
		}
	}
	return fresh
}
