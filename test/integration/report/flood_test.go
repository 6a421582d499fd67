//go:build integration

package report

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/internal/report"
	"github.com/backfill-dev/backfill/test/framework"
)

// floodReports and floodWorkers: the flood of bad tokens, sent at once.
const (
	floodReports = 1000
	floodWorkers = 50
)

// TestJunkTokenFlood: a thousand reports with bad tokens, from many
// clients at once, cost the apiserver only as many TokenReviews as the
// manager's global limit lets through (counted by the apiserver itself),
// and a pod that reported before keeps reporting through the flood; one
// that comes after is served once the limit has refilled.
func TestJunkTokenFlood(t *testing.T) {
	ns := newNamespace(t)
	_, pods := runningJob(t, ns, "flooded", 2)
	token := podToken(t, pods[0], tfjob.ReportAudience)
	wantReport(t, ns, "flooded", bearer(token), `{"step": 1}`, http.StatusNoContent, "")

	flood := &http.Client{Timeout: 30 * time.Second, Transport: reports.Transport.(*http.Transport).Clone()}
	flood.Transport.(*http.Transport).MaxIdleConnsPerHost = floodWorkers
	before := tokenReviews(t)
	start := time.Now()
	answers, served := sendFlood(t, flood, ns, "flooded", token, forgedTokens(t, token, floodReports))
	elapsed := time.Since(start)
	reviews := tokenReviews(t) - before

	limits := report.DefaultReviewLimits()
	// A token bucket lets through its burst and its rate since: this is
	// the most the manager can have asked, wherever the flood's time went.
	bound := float64(limits.Burst()) + limits.PerSecond*elapsed.Seconds()
	t.Logf("%d reports with bad tokens in %v: the apiserver served %d TokenReviews (bound %.0f); answers %v", floodReports, elapsed.Round(time.Millisecond), reviews, bound, answers)
	if float64(reviews) > bound {
		t.Errorf("the flood cost %d TokenReviews, want at most %.0f (a burst of %d and %v a second for %v)", reviews, bound, limits.Burst(), limits.PerSecond, elapsed)
	}
	for status, n := range answers {
		if status != http.StatusUnauthorized && status != http.StatusServiceUnavailable {
			t.Errorf("%d bad tokens answered %d, want 401 or 503", n, status)
		}
	}
	if served != 3 {
		t.Errorf("%d of the pod's 3 reports during the flood served, want all", served)
	}

	// Another pod's first report needs a review: served once the limit
	// lets one through again (503 with Retry-After until then).
	other := podToken(t, pods[1], tfjob.ReportAudience)
	framework.Eventually(t, "a new pod's report to be served after the flood", func(context.Context) (bool, error) {
		status, why := post(t, ns, "flooded", bearer(other), `{"step": 2}`)
		if status != http.StatusNoContent && status != http.StatusServiceUnavailable {
			return false, fmt.Errorf("a new pod's report after the flood: %d %q, want 204 (or 503 until the limit refills)", status, why)
		}
		return status == http.StatusNoContent, nil
	})
}

// TestRepeatedJunkToken: a bad token sent again is refused from the
// manager's memory, and a token that is no JWT for backfill.dev at all is
// refused without asking the apiserver.
func TestRepeatedJunkToken(t *testing.T) {
	ns := newNamespace(t)
	_, pods := runningJob(t, ns, "repeated", 1)
	junk := forgedTokens(t, podToken(t, pods[0], tfjob.ReportAudience), 1)[0]
	// The first answer costs a review (a 503 only if an earlier test
	// spent the limit).
	framework.Eventually(t, "the bad token to be refused", func(context.Context) (bool, error) {
		status, _ := post(t, ns, "repeated", bearer(junk), `{"step": 1}`)
		return status == http.StatusUnauthorized, nil
	})
	before := tokenReviews(t)
	for i := range 100 {
		wantReport(t, ns, "repeated", bearer(junk), `{"step": 1}`, http.StatusUnauthorized, "not valid for backfill.dev")
		wantReport(t, ns, "repeated", bearer(fmt.Sprintf("junk-%d", i)), `{"step": 1}`, http.StatusUnauthorized, "not valid for backfill.dev")
	}
	if reviews := tokenReviews(t) - before; reviews != 0 {
		t.Errorf("200 refusals of tokens known bad cost %d TokenReviews, want 0", reviews)
	}
}

// forgedTokens are n tokens shaped as token (a JWT for backfill.dev, not
// expired), each with a signature of random bytes: only a TokenReview can
// tell that they are bad.
func forgedTokens(t *testing.T, token string, n int) []string {
	t.Helper()
	signed := token[:strings.LastIndex(token, ".")]
	out := make([]string, n)
	for i := range out {
		sig := make([]byte, 64)
		if _, err := rand.Read(sig); err != nil {
			t.Fatal(err)
		}
		out[i] = signed + "." + base64.RawURLEncoding.EncodeToString(sig)
	}
	return out
}

// sendFlood posts a report with each bad token from floodWorkers clients at
// once, and from the pod of token three times in between; it returns the
// bad tokens' answers by status and how many of the pod's reports were
// served.
func sendFlood(t *testing.T, c *http.Client, ns, job, token string, bad []string) (map[int]int, int) {
	t.Helper()
	var (
		mu      sync.Mutex
		answers = map[int]int{}
		served  int
		wg      sync.WaitGroup
		next    = make(chan int)
	)
	for range floodWorkers {
		wg.Go(func() {
			for i := range next {
				if i > 0 && i%(len(bad)/4) == 0 {
					status := postWith(t, c, ns, job, bearer(token), `{"step": 2}`)
					mu.Lock()
					served += btoi(status == http.StatusNoContent)
					mu.Unlock()
				}
				status := postWith(t, c, ns, job, bearer(bad[i]), `{"step": 7777}`)
				mu.Lock()
				answers[status]++
				mu.Unlock()
			}
		})
	}
	for i := range bad {
		next <- i
	}
	close(next)
	wg.Wait()
	return answers, served
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// postWith posts a report through c and returns its status (0 when the
// request failed, which fails the test).
func postWith(t *testing.T, c *http.Client, ns, job, authorization, body string) int {
	req, err := http.NewRequest(http.MethodPost, reportURL+tfjob.ReportPath(ns, job), strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0
	}
	req.Header.Set("Authorization", authorization)
	resp, err := c.Do(req)
	if err != nil {
		t.Errorf("Posting a report: %v", err)
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
		t.Error("a 503 without Retry-After")
	}
	return resp.StatusCode
}

// tokenReviews is how many TokenReviews the apiserver has served, by its
// own apiserver_request_total.
func tokenReviews(t *testing.T) int {
	t.Helper()
	body, err := clientset.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("Reading the apiserver's /metrics: %v", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("Parsing the apiserver's /metrics: %v", err)
	}
	n := 0.0
	for _, m := range families["apiserver_request_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["resource"] == "tokenreviews" && labels["verb"] == "POST" {
			n += m.GetCounter().GetValue()
		}
	}
	return int(n)
}
