package report

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	testclock "k8s.io/utils/clock/testing"

	"github.com/backfill-dev/backfill/internal/progress"
)

// goodOnly authenticates the token "good" as mnist-worker-0 and refuses
// every other: the fuzzer's answers then depend on parsing alone.
type goodOnly struct{}

func (goodOnly) Authenticate(_ context.Context, token string) (Identity, error) {
	if token == "good" {
		return tokens["good"].id, nil
	}
	return Identity{}, ErrUnauthenticated
}

// FuzzReportParsing: whatever the Authorization headers (one a line) and
// the body, the handler does not panic and answers 204 or a 4xx with a
// reason; 204 only for the good token and a body DecodeReport takes. Run
// it with
//
//	go test -run '^$' -fuzz FuzzReportParsing -fuzztime 1m -fuzzminimizetime 5s ./internal/report/
//
// (minimizing a body of a kilobyte takes the default minute otherwise).
func FuzzReportParsing(f *testing.F) {
	seeds := []struct {
		authorization string
		body          string
		unknownLength bool
	}{
		{"Bearer good", `{"step": 1200, "epoch": 3, "checkpoint": true}`, false},
		{"Bearer good", `{"step": 1}`, true},
		{"bearer good", `{"step": 0, "epoch": 0, "checkpoint": false}`, false},
		{"", `{"step": 1}`, false},
		{"Bearer", `{"step": 1}`, false},
		{"Bearer ", `{"step": 1}`, false},
		{"Bearer good extra", `{"step": 1}`, false},
		{"Bearer\tgood", `{"step": 1}`, false},
		{"Basic dXNlcjpwYXNz", `{"step": 1}`, false},
		{"Bearer good\nBearer good", `{"step": 1}`, false},
		{"Bearer " + jwt(t0, "x"), `{"step": 1}`, false},
		{"Bearer a.b.c", `{"step": 1}`, false},
		{"Bearer good", ``, false},
		{"Bearer good", `{}`, false},
		{"Bearer good", `{"step": -1}`, false},
		{"Bearer good", `{"step": 1.5}`, false},
		{"Bearer good", `{"step": 99999999999999999999}`, false},
		{"Bearer good", `{"step": "1"}`, false},
		{"Bearer good", `{"step": 1, "loss": 0.1}`, false},
		{"Bearer good", `{"step": 1, "step": 2}`, false},
		{"Bearer good", `{"step": 1} {"step": 2}`, false},
		{"Bearer good", `[{"step": 1}]`, false},
		{"Bearer good", `null`, false},
		{"Bearer good", `{"step": 1, "checkpoint": null}`, false},
		{"Bearer good", "\xef\xbb\xbf{\"step\": 1}", false},
		{"Bearer good", `{"step": 1` + strings.Repeat(" ", 1100) + `}`, true},
	}
	for _, s := range seeds {
		f.Add(s.authorization, []byte(s.body), s.unknownLength)
	}
	f.Fuzz(func(t *testing.T, authorization string, body []byte, unknownLength bool) {
		// A handler of its own: no rate limit or step carries over.
		h := NewHandler(goodOnly{}, newFakeObjects(), progress.NewStore(), testclock.NewFakePassiveClock(t0), logr.Discard())
		req := httptest.NewRequest(http.MethodPost, goodPath, bytes.NewReader(body))
		if unknownLength {
			req.ContentLength = -1
		}
		if authorization != "" {
			for _, v := range strings.Split(authorization, "\n") {
				req.Header.Add("Authorization", v)
			}
		}
		token, tokenRefused := bearerToken(req)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		if rec.Code == http.StatusNoContent {
			if token != "good" {
				t.Fatalf("204 for the Authorization %q (token %q)", authorization, token)
			}
			if _, err := progress.DecodeReport(body); err != nil {
				t.Fatalf("204 for a body DecodeReport refuses (%v): %q", err, body)
			}
			return
		}
		if rec.Code < 400 || rec.Code >= 500 {
			t.Fatalf("%d for Authorization %q and body %q, want 204 or a 4xx", rec.Code, authorization, body)
		}
		if strings.TrimSpace(rec.Body.String()) == "" {
			t.Fatalf("a %d without a reason", rec.Code)
		}
		if tokenRefused != nil && (tokenRefused.status != http.StatusUnauthorized || rec.Code != http.StatusUnauthorized || tokenRefused.reason == "") {
			t.Fatalf("the Authorization %q refused with %d %q, answered %d, want 401 with a reason", authorization, tokenRefused.status, tokenRefused.reason, rec.Code)
		}
		if tokenRefused == nil && token == "" {
			t.Fatalf("the Authorization %q gave an empty token and no refusal", authorization)
		}
	})
}
