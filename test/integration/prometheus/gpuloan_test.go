//go:build integration

package prometheus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/observability/dashboards"
	"github.com/backfill-dev/backfill/internal/observability/rules"
)

// Two GPU pools of the loans: A100 lends 8 GPUs, its next return due in an
// hour; L4 lends none.
const (
	poolA100 = "NVIDIA-A100-SXM4-80GB"
	poolL4   = "NVIDIA-L4"
)

// TestGPULoansOnRealPrometheus serves the manager's own metrics registry,
// as the manager's /metrics does, to a real Prometheus that scrapes it
// every second and evaluates the shipped rule file every second. The GPU
// loan panels of the cockpit read the pools as the manager exports them,
// the alerts stay silent while the counters sit at zero, and fire for the
// pool whose loan came back late and whose online pod waited, and for no
// other.
func TestGPULoansOnRealPrometheus(t *testing.T) {
	metrics.Register()
	metrics.GPULoanPool(poolA100, 8, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	metrics.GPULoanPool(poolL4, 0, time.Time{}, time.Time{})
	t.Cleanup(func() {
		metrics.GPULoanPoolGone(poolA100)
		metrics.GPULoanPoolGone(poolL4)
	})
	manager := serveRegistry(t)

	dir := t.TempDir()
	ruleFile := filepath.Join(dir, "backfill.rules.yaml")
	content, err := rules.RuleFile(rules.Groups())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ruleFile, content, 0o644); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %s
scrape_configs:
  - job_name: backfill-manager
    static_configs:
      - targets: [%q]
`, ruleFile, manager)
	prom := startPrometheus(t, freeAddr(t), []byte(config))

	ctx := context.Background()
	// Queries with the dashboard's variables: its range an hour, longer
	// than the test, so that it covers every sample.
	values := map[string]string{"__rate_interval": "1m", "__range": "1h"}
	byPool := func(promql string) (map[string]float64, error) {
		samples, err := prom.query(ctx, dashboards.Substitute(promql, values))
		if err != nil {
			return nil, err
		}
		out := map[string]float64{}
		for _, s := range samples {
			v, err := strconv.ParseFloat(s.Value[1].(string), 64)
			if err != nil {
				return nil, err
			}
			out[s.Metric["pool"]] = v
		}
		return out, nil
	}
	// The two pools' counters scraped at zero several times: a rate has
	// samples to start from.
	prom.eventually(t, "the pools' counters scraped at zero five times", func(context.Context) error {
		got, err := byPool(`count_over_time(backfill_gpu_loan_missed_returns_total[1h])`)
		if err == nil && (got[poolA100] < 5 || got[poolL4] < 5) {
			err = fmt.Errorf("samples per pool %v", got)
		}
		return err
	})

	lent, err := byPool(dashboards.GPULoansLent().Expr)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]float64{poolA100: 8, poolL4: 0}; fmt.Sprint(onlyPools(lent)) != fmt.Sprint(want) {
		t.Errorf("GPUs lent %v, want %v", lent, want)
	}
	next, err := byPool(dashboards.GPULoanNextReturn().Expr)
	if err != nil {
		t.Fatal(err)
	}
	if in, ok := next[poolA100]; !ok || in < 3500 || in > 3600 {
		t.Errorf("next return of %s in %v s, want just under an hour", poolA100, next)
	}
	if _, ok := next[poolL4]; ok {
		t.Errorf("next return of %s in %v s, want none: it lends nothing", poolL4, next[poolL4])
	}
	if firing := firingAlerts(t, prom); len(firing) > 0 {
		t.Errorf("alerts firing on counters at zero: %v", firing)
	}

	// The morning: one loan back on time, one late while an online pod
	// waited 90 s for its GPU.
	metrics.GPULoanReturned(poolA100, metrics.ReturnOnTime)
	metrics.GPULoanReturned(poolA100, metrics.ReturnLate)
	metrics.GPULoanMissedReturn(poolA100)
	metrics.GPULoanOnlineWaited(poolA100, 90*time.Second)
	// The night's goodput: 8 GPUs for 15 minutes, 4 of them losing 9.
	metrics.GPULoanHeld(poolA100, 8, 15*time.Minute)
	metrics.GPULoanLost(poolA100, 4, 9*time.Minute)

	want := []string{
		"BackfillGPULoanMissedReturn pool=" + poolA100 + " severity=warning",
		"BackfillGPULoanReturnedLate pool=" + poolA100 + " severity=warning",
	}
	prom.eventually(t, "the GPU loan alerts firing for "+poolA100, func(context.Context) error {
		if got := firingAlerts(t, prom); fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("firing %v, want %v", got, want)
		}
		return nil
	})

	// The returns table: the counts rounded, the wait at least what was
	// added (an increase extrapolates a little past the last sample).
	cells := map[string]map[string]float64{}
	for _, c := range dashboards.GPULoanColumns() {
		got, err := byPool(c.Expr)
		if err != nil {
			t.Fatalf("column %s: %v", c.Name, err)
		}
		cells[c.Name] = onlyPools(got)
	}
	wantCells := map[string]map[string]float64{
		"Returned on time": {poolA100: 1, poolL4: 0},
		"Returned late":    {poolA100: 1, poolL4: 0},
		"Missed returns":   {poolA100: 1, poolL4: 0},
	}
	for name, w := range wantCells {
		if fmt.Sprint(cells[name]) != fmt.Sprint(w) {
			t.Errorf("column %s: %v, want %v", name, cells[name], w)
		}
	}
	if wait := cells["Online wait"]; wait[poolA100] < 90 || wait[poolA100] > 135 || wait[poolL4] != 0 {
		t.Errorf("column Online wait: %v, want 90 s or a little more for %s, 0 for %s", wait, poolA100, poolL4)
	}
	for name, want := range map[string]float64{"GPU-hours lent": 2, "GPU-hours lost": 0.6} {
		if got := cells[name]; got[poolA100] < want || got[poolA100] > 1.5*want || got[poolL4] != 0 {
			t.Errorf("column %s: %v, want %v or a little more for %s, 0 for %s", name, got, want, poolA100, poolL4)
		}
	}
	waiting, err := byPool(dashboards.GPULoanOnlineWaiting().Expr)
	if err != nil {
		t.Fatal(err)
	}
	if waiting[poolA100] <= 0 || waiting[poolL4] != 0 {
		t.Errorf("online pods waiting %v, want some for %s, none for %s", waiting, poolA100, poolL4)
	}
}

// onlyPools keeps the test's two pools: the registry is the process's, and
// another test's manager may have left a pool of its own.
func onlyPools(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, p := range []string{poolA100, poolL4} {
		if v, ok := m[p]; ok {
			out[p] = v
		}
	}
	return out
}

// firingAlerts are the GPU loan alerts Prometheus fires now, each as its
// name and its labels but alertstate, sorted.
func firingAlerts(t *testing.T, prom *prometheusServer) []string {
	t.Helper()
	samples, err := prom.query(context.Background(), `ALERTS{alertstate="firing",alertname=~"BackfillGPULoan.+"}`)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range samples {
		var labels []string
		for k, v := range s.Metric {
			if k != "__name__" && k != "alertname" && k != "alertstate" {
				labels = append(labels, k+"="+v)
			}
		}
		sort.Strings(labels)
		out = append(out, strings.Join(append([]string{s.Metric["alertname"]}, labels...), " "))
	}
	sort.Strings(out)
	return out
}

// serveRegistry serves controller-runtime's registry, where
// metrics.Register puts the manager's metrics, on a free loopback port
// until t ends, and returns its address.
func serveRegistry(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listening for the metrics: %v", err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutting the metrics server down: %v", err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Metrics server: %v", err)
		}
	})
	return ln.Addr().String()
}
