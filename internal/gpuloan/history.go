package gpuloan

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/backfill-dev/backfill/internal/tide"
)

// historyQueries are kube-state-metrics' replicas each workload's spec
// asked for, by workload key prefix: what its autoscaler decided, which is
// what its pods will need again at the same time of day.
var historyQueries = map[string]string{
	kindDeployment:  `max by (namespace, deployment) (kube_deployment_spec_replicas)`,
	kindStatefulSet: `max by (namespace, statefulset) (kube_statefulset_replicas)`,
}

// nameLabels name the workload in each query's series.
var nameLabels = map[string]model.LabelName{kindDeployment: "deployment", kindStatefulSet: "statefulset"}

// sampleSource reads workloads' past replicas, by workload key.
type sampleSource interface {
	samples(ctx context.Context, from, to time.Time, step time.Duration) (map[string][]tide.Sample, error)
}

// promSamples reads them from Prometheus.
type promSamples struct{ api promv1.API }

func newPromSamples(url string) (*promSamples, error) {
	c, err := api.NewClient(api.Config{Address: url})
	if err != nil {
		return nil, fmt.Errorf("--prometheus-url %q: %w", url, err)
	}
	return &promSamples{api: promv1.NewAPI(c)}, nil
}

func (p *promSamples) samples(ctx context.Context, from, to time.Time, step time.Duration) (map[string][]tide.Sample, error) {
	out := map[string][]tide.Sample{}
	for kind, q := range historyQueries {
		v, _, _, err := p.api.QueryRange(ctx, q, promv1.Range{Start: from, End: to, Step: step})
		if err != nil {
			return nil, fmt.Errorf("querying Prometheus for the replicas history (%s): %w", q, err)
		}
		matrix, ok := v.(model.Matrix)
		if !ok {
			return nil, fmt.Errorf("querying Prometheus for the replicas history (%s): got %s, want a matrix", q, v.Type())
		}
		for _, series := range matrix {
			key := kind + "/" + string(series.Metric["namespace"]) + "/" + string(series.Metric[nameLabels[kind]])
			for _, s := range series.Values {
				out[key] = append(out[key], tide.Sample{At: s.Timestamp.Time(), Replicas: int32(s.Value)})
			}
		}
	}
	return out, nil
}

// histories keeps each workload's forecast from its history, read again
// every refresh.
type histories struct {
	source sampleSource
	s      Settings
	readAt time.Time
	byKey  map[string]*tide.History
}

// of returns the workloads' histories at now, reading them again when the
// last read is older than the refresh. A workload with too little history
// has none. On a failed read the last histories stay, and the error is
// returned once.
func (h *histories) of(ctx context.Context, now time.Time) (map[string]*tide.History, error) {
	if h == nil || h.source == nil {
		return nil, nil
	}
	if !h.readAt.IsZero() && now.Sub(h.readAt) < h.s.HistoryRefresh {
		return h.byKey, nil
	}
	h.readAt = now
	from := now.Add(-time.Duration(h.s.History.Days) * 24 * time.Hour)
	samples, err := h.source.samples(ctx, from, now, h.s.History.Slot)
	if err != nil {
		return h.byKey, err
	}
	byKey := map[string]*tide.History{}
	for key, ss := range samples {
		hist, err := tide.NewHistory(ss, now, time.UTC, h.s.History)
		if errors.Is(err, tide.ErrTooLittleHistory) {
			continue
		}
		if err != nil {
			return h.byKey, fmt.Errorf("the replicas history of %s: %w", key, err)
		}
		byKey[key] = hist
	}
	h.byKey = byKey
	return byKey, nil
}
