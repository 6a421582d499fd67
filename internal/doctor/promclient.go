package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/backfill-dev/backfill/internal/gpuloan"
	"github.com/backfill-dev/backfill/internal/observability/expr"
)

// PrometheusView is what doctor read from Prometheus's HTTP API.
type PrometheusView struct {
	URL string
	// Err is set when Prometheus could not be asked at all.
	Err     error
	Targets []Target
	// Series counts the series of each key metric; Errs holds the failed
	// queries.
	Series map[string]int
	Errs   map[string]error
	// Panels is what each of CockpitPanels returned, by name.
	Panels map[string]PanelData
	// OfflinePods is the number of offline pods Prometheus knows of.
	OfflinePods int
	// IdleGPUs are the GPUs online pods held idle over the last day
	// (IdleGPUsQuery); IdleGPUsErr is set when that query failed.
	IdleGPUs    []IdleGPU
	IdleGPUsErr error
	// LoanHistories are the online workloads' replicas histories as GPU
	// loans read them (gpuloan.ReadHistories); LoanHistoriesErr is set
	// when that read failed.
	LoanHistories    gpuloan.Histories
	LoanHistoriesErr error
}

// ReadPrometheus asks the Prometheus at base for its active targets, the
// series of the key metrics, the cockpit's queries and the GPUs online
// pods held idle, and the online workloads' replicas histories.
func ReadPrometheus(ctx context.Context, hc *http.Client, base string) *PrometheusView {
	v := &PrometheusView{URL: base, Series: map[string]int{}, Errs: map[string]error{}, Panels: map[string]PanelData{}}
	var targets struct {
		ActiveTargets []struct {
			Labels    map[string]string `json:"labels"`
			ScrapeURL string            `json:"scrapeUrl"`
			Health    string            `json:"health"`
			LastError string            `json:"lastError"`
		} `json:"activeTargets"`
	}
	if err := promGet(ctx, hc, base, "/api/v1/targets", url.Values{"state": {"active"}}, &targets); err != nil {
		v.Err = err
		return v
	}
	for _, t := range targets.ActiveTargets {
		v.Targets = append(v.Targets, Target{Job: t.Labels["job"], ScrapeURL: t.ScrapeURL, Health: t.Health, LastError: t.LastError})
	}
	for _, m := range KeyMetrics {
		n, err := countSeries(ctx, hc, base, m.Name)
		if err != nil {
			v.Errs[m.Name] = err
			continue
		}
		v.Series[m.Name] = n
	}
	// Unknown counts as none: the panels' own queries then fail too.
	v.OfflinePods, _ = countSeries(ctx, hc, base, expr.OfflinePods())
	for _, p := range CockpitPanels() {
		n, err := countSeries(ctx, hc, base, p.Expr)
		v.Panels[p.Name] = PanelData{Series: n, Err: err}
	}
	v.IdleGPUs, v.IdleGPUsErr = readIdleGPUs(ctx, hc, base)
	v.LoanHistories, v.LoanHistoriesErr = gpuloan.ReadHistories(ctx, base, time.Now())
	return v
}

// countSeries runs an instant query and counts the series it returns.
func countSeries(ctx context.Context, hc *http.Client, base, query string) (int, error) {
	var result struct {
		Result []json.RawMessage `json:"result"`
	}
	if err := promGet(ctx, hc, base, "/api/v1/query", url.Values{"query": {query}}, &result); err != nil {
		return 0, err
	}
	return len(result.Result), nil
}

// promGet calls one API endpoint and decodes its data field into out.
func promGet(ctx context.Context, hc *http.Client, base, path string, query url.Values, out any) error {
	u := strings.TrimSuffix(base, "/") + path + "?" + query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("asking Prometheus: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	var envelope struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return fmt.Errorf("%s answered HTTP %d, not Prometheus's API: %.80s", path, resp.StatusCode, body)
	}
	if envelope.Status != "success" {
		return fmt.Errorf("%s: %s", path, envelope.Error)
	}
	if err := json.Unmarshal(envelope.Data, out); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}

// checkPrometheus turns a view into results; nil means no URL was given.
func checkPrometheus(v *PrometheusView, gpuNodes int) []Result {
	if v == nil {
		return []Result{prometheusSkipped()}
	}
	if v.Err != nil {
		return []Result{{Check: CheckPrometheusTargets, Status: StatusFail, Object: v.URL,
			Finding: fmt.Sprintf("cannot read Prometheus at %s: %v", v.URL, v.Err),
			Fix:     "check --prometheus-url: it is Prometheus's base URL, e.g. http://localhost:9090 after kubectl port-forward"}}
	}
	out := append(checkTargets(v.Targets, gpuNodes), checkData(v.Series, v.Errs, gpuNodes)...)
	return append(out, checkPanels(CockpitPanels(), v.Panels, v.OfflinePods, gpuNodes)...)
}
