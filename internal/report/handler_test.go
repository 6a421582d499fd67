package report

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRefusals: every refusal has its status and a reason, and records
// nothing.
func TestRefusals(t *testing.T) {
	const report = `{"step": 10}`
	cases := map[string]struct {
		method, path, token, body string
		header                    []string // raw Authorization values, instead of token
		status                    int
		reason                    string
	}{
		"another path":            {path: "/v1/namespaces/ml/tfjobs/mnist", token: "good", body: report, status: 404, reason: "not found"},
		"the root":                {path: "/", token: "good", body: report, status: 404, reason: "not found"},
		"a longer path":           {path: goodPath + "/x", token: "good", body: report, status: 404, reason: "not found"},
		"GET":                     {method: http.MethodGet, path: goodPath, token: "good", status: 405, reason: "Method Not Allowed"},
		"PUT":                     {method: http.MethodPut, path: goodPath, token: "good", body: report, status: 405, reason: "Method Not Allowed"},
		"no token":                {path: goodPath, body: report, status: 401, reason: "no token"},
		"basic auth":              {path: goodPath, header: []string{"Basic dXNlcjpwYXNz"}, body: report, status: 401, reason: "malformed Authorization"},
		"bearer and nothing":      {path: goodPath, header: []string{"Bearer "}, body: report, status: 401, reason: "malformed Authorization"},
		"bearer alone":            {path: goodPath, header: []string{"Bearer"}, body: report, status: 401, reason: "malformed Authorization"},
		"two words":               {path: goodPath, header: []string{"Bearer good extra"}, body: report, status: 401, reason: "malformed Authorization"},
		"two headers":             {path: goodPath, header: []string{"Bearer good", "Bearer good"}, body: report, status: 401, reason: "more than one"},
		"a bad token":             {path: goodPath, token: "bad", body: report, status: 401, reason: "not valid for backfill.dev"},
		"an unknown token":        {path: goodPath, token: "nobody", body: report, status: 401, reason: "not valid"},
		"a deleted pod's token":   {path: goodPath, token: "gone", body: report, status: 403, reason: "gone"},
		"a pod gone from cache":   {path: goodPath, token: "vanished", body: report, status: 403, reason: "is gone"},
		"a recreated pod's token": {path: goodPath, token: "recreated", body: report, status: 403, reason: "recreated"},
		"a terminating pod":       {path: goodPath, token: "terminating", body: report, status: 403, reason: "terminating"},
		"another job's pod":       {path: goodPath, token: "other", body: report, status: 403, reason: "not a replica of TFJob ml/mnist"},
		"another namespace's pod": {path: goodPath, token: "elsewhere", body: report, status: 403, reason: "not a replica"},
		"a pod of no job":         {path: goodPath, token: "bare", body: report, status: 403, reason: "not a replica"},
		"a token bound to no pod": {path: goodPath, token: "unbound", body: report, status: 403, reason: "bound to no pod"},
		// A pod learns nothing of jobs but its own: another job's name,
		// existing or not, is 403.
		"a job that does not exist": {path: "/v1/namespaces/ml/tfjobs/nope/progress", token: "good", body: report, status: 403, reason: "not a replica"},
		"its own job, deleted":      {path: "/v1/namespaces/ml/tfjobs/ghost/progress", token: "ghost", body: report, status: 404, reason: "does not exist"},
		"its job being deleted":     {path: "/v1/namespaces/ml/tfjobs/deleting/progress", token: "deleting", body: report, status: 404, reason: "being deleted"},
		"an earlier job's pod":      {path: "/v1/namespaces/ml/tfjobs/reborn/progress", token: "reborn", body: report, status: 403, reason: "earlier TFJob"},
		"authentication down":       {path: goodPath, token: "broken", body: report, status: 503, reason: "retry"},
		"too large":                 {path: goodPath, token: "good", body: `{"step": 1` + strings.Repeat(" ", 1024) + `}`, status: 413, reason: "larger than 1024"},
		"not JSON":                  {path: goodPath, token: "good", body: `step=1`, status: 400, reason: "is not"},
		"an unknown field":          {path: goodPath, token: "good", body: `{"step": 1, "loss": 0.1}`, status: 400, reason: `unknown field "loss"`},
		"a negative step":           {path: goodPath, token: "good", body: `{"step": -1}`, status: 400, reason: "cannot be negative"},
		"no step":                   {path: goodPath, token: "good", body: `{}`, status: 400, reason: `no "step"`},
		"empty":                     {path: goodPath, token: "good", status: 400, reason: "is not"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			th := newTestHandler(newFakeObjects())
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			req := httptest.NewRequest(method, tc.path, strings.NewReader(tc.body))
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			for _, h := range tc.header {
				req.Header.Add("Authorization", h)
			}
			rec := httptest.NewRecorder()
			th.ServeHTTP(rec, req)
			wantStatus(t, rec, tc.status, tc.reason)
			if tc.status == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
			if tc.status == http.StatusMethodNotAllowed && rec.Header().Get("Allow") != http.MethodPost {
				t.Errorf("a 405 with Allow %q, want POST", rec.Header().Get("Allow"))
			}
			if _, ok := th.store.Progress(jobUID); ok || th.store.records != 0 {
				t.Errorf("a refused report was recorded (%d records)", th.store.records)
			}
		})
	}
}

// TestReportRecorded: a report of a job's own pod is 204 and lands in the
// store, for that job and pod, at the handler's time.
func TestReportRecorded(t *testing.T) {
	th := newTestHandler(newFakeObjects())
	wantStatus(t, th.post(goodPath, "good", `{"step": 1200, "epoch": 3, "checkpoint": true}`), http.StatusNoContent, "")
	p, ok := th.store.Progress(jobUID)
	if !ok || p.Step != 1200 || p.Epoch == nil || *p.Epoch != 3 || p.CheckpointStep == nil || *p.CheckpointStep != 1200 ||
		!p.ReportTime.Time.Equal(t0) || p.CheckpointTime == nil || !p.CheckpointTime.Time.Equal(t0) {
		t.Errorf("progress %+v (%v), want step 1200, epoch 3, a checkpoint at step 1200, at %v", p, ok, t0)
	}
	if n := len(th.store.Updates()); n != 1 {
		t.Errorf("%d wake-ups of the controller, want 1", n)
	}
}

// TestStepBackwards: a pod's steps never go back; the refusal keeps the
// progress it had.
func TestStepBackwards(t *testing.T) {
	th := newTestHandler(newFakeObjects())
	wantStatus(t, th.post(goodPath, "good", `{"step": 100}`), http.StatusNoContent, "")
	th.clock.SetTime(th.clock.Now().Add(time.Second))
	wantStatus(t, th.post(goodPath, "good", `{"step": 99}`), http.StatusBadRequest, "is before step 100")
	if p, _ := th.store.Progress(jobUID); p.Step != 100 {
		t.Errorf("step %d after a refused step back, want 100", p.Step)
	}
	wantStatus(t, th.post(goodPath, "good", `{"step": 100}`), http.StatusNoContent, "")
}

// TestTooLargeDeclared: a body whose Content-Length is over the limit is
// refused unread.
func TestTooLargeDeclared(t *testing.T) {
	th := newTestHandler(newFakeObjects())
	body := &countingReader{r: strings.NewReader(`{"step": 1` + strings.Repeat(" ", 2048) + `}`)}
	req := httptest.NewRequest(http.MethodPost, goodPath, body)
	req.ContentLength = 2048 + 11
	req.Header.Set("Authorization", "Bearer good")
	rec := httptest.NewRecorder()
	th.ServeHTTP(rec, req)
	wantStatus(t, rec, http.StatusRequestEntityTooLarge, "larger than")
	if body.n != 0 {
		t.Errorf("read %d bytes of a body declared too large", body.n)
	}
}

// TestTooLargeWithoutLength: a body of unknown length is cut one byte past
// the limit, not read whole.
func TestTooLargeWithoutLength(t *testing.T) {
	th := newTestHandler(newFakeObjects())
	body := &countingReader{r: strings.NewReader(`{"step": 1` + strings.Repeat(" ", 1<<20) + `}`)}
	req := httptest.NewRequest(http.MethodPost, goodPath, body)
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer good")
	rec := httptest.NewRecorder()
	th.ServeHTTP(rec, req)
	wantStatus(t, rec, http.StatusRequestEntityTooLarge, "larger than")
	if body.n > 64<<10 {
		t.Errorf("read %d bytes of an oversized body", body.n)
	}
}

type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestRateLimit: a pod has a burst of 10 reports, then 2 a second; other
// pods have their own.
func TestRateLimit(t *testing.T) {
	th := newTestHandler(newFakeObjects())
	for range 10 {
		wantStatus(t, th.post(goodPath, "good", `{"step": 1}`), http.StatusNoContent, "")
	}
	rec := th.post(goodPath, "good", `{"step": 1}`)
	wantStatus(t, rec, http.StatusTooManyRequests, "more than 2 times a second")
	if rec.Header().Get("Retry-After") == "" {
		t.Error("a 429 without Retry-After")
	}
	wantStatus(t, th.post("/v1/namespaces/ml/tfjobs/other/progress", "other", `{"step": 1}`), http.StatusNoContent, "")
	th.clock.SetTime(th.clock.Now().Add(time.Second / 2))
	wantStatus(t, th.post(goodPath, "good", `{"step": 2}`), http.StatusNoContent, "")
	wantStatus(t, th.post(goodPath, "good", `{"step": 3}`), http.StatusTooManyRequests, "")
	if p, _ := th.store.Progress(jobUID); p.Step != 2 {
		t.Errorf("step %d, want 2: a limited report is not recorded", p.Step)
	}
}
