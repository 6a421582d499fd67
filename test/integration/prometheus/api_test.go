//go:build integration

package prometheus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// sample is one element of an instant vector from /api/v1/query.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"` // [unix time, "value"]
}

// target is one active target from /api/v1/targets.
type target struct {
	ScrapePool string            `json:"scrapePool"`
	Labels     map[string]string `json:"labels"`
	Health     string            `json:"health"`
	LastError  string            `json:"lastError"`
}

// get decodes the data of a successful API answer to path into data. A
// connection error is returned, not fatal: Prometheus may not listen yet.
func (p *prometheusServer) get(ctx context.Context, path string, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	if data == nil {
		return nil
	}
	envelope := struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   any    `json:"data"`
	}{Data: data}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return fmt.Errorf("GET %s: decoding %s: %w", path, body, err)
	}
	if envelope.Status != "success" {
		return fmt.Errorf("GET %s: status %q: %s", path, envelope.Status, envelope.Error)
	}
	return nil
}

// query runs an instant PromQL query.
func (p *prometheusServer) query(ctx context.Context, promql string) ([]sample, error) {
	var data struct {
		ResultType string   `json:"resultType"`
		Result     []sample `json:"result"`
	}
	if err := p.get(ctx, "/api/v1/query?query="+url.QueryEscape(promql), &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: result type %q, want vector", promql, data.ResultType)
	}
	return data.Result, nil
}

// targets lists the active targets.
func (p *prometheusServer) targets(ctx context.Context) ([]target, error) {
	var data struct {
		ActiveTargets []target `json:"activeTargets"`
	}
	if err := p.get(ctx, "/api/v1/targets?state=active", &data); err != nil {
		return nil, err
	}
	return data.ActiveTargets, nil
}

// errExited stops a wait: Prometheus is gone, and polling longer is useless.
var errExited = errors.New("prometheus exited")

// eventually polls cond every 250 ms until it holds, fails or timeout
// passes; it fails t with what, and the last reason cond gave, on timeout.
// cond's error is a reason to keep polling; errExited (Prometheus died)
// ends the wait at once.
func (p *prometheusServer) eventually(t *testing.T, what string, cond func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-p.proc.Done():
			if err := p.proc.Wait(); err != nil {
				return false, fmt.Errorf("%w: %w", errExited, err)
			}
			return false, errExited
		default:
		}
		last = cond(ctx)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: %v (last: %v)", what, err, last)
	}
}
