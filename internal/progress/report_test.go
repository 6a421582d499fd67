package progress

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

func TestDecodeReport(t *testing.T) {
	cases := map[string]struct {
		body    string
		want    Report
		wantErr string
	}{
		"step":                 {body: `{"step": 12}`, want: Report{Step: 12}},
		"everything":           {body: `{"step": 1200, "epoch": 3, "checkpoint": true}`, want: Report{Step: 1200, Epoch: ptr.To[int64](3), Checkpoint: true}},
		"step zero":            {body: `{"step": 0}`, want: Report{}},
		"no step":              {body: `{"epoch": 1}`, wantErr: `no "step"`},
		"negative step":        {body: `{"step": -1}`, wantErr: `"step" is -1`},
		"negative epoch":       {body: `{"step": 1, "epoch": -2}`, wantErr: `"epoch" is -2`},
		"unknown field":        {body: `{"step": 1, "loss": 0.3}`, wantErr: `unknown field "loss"`},
		"not JSON":             {body: `step=1`, wantErr: "is not"},
		"a string step":        {body: `{"step": "1"}`, wantErr: "is not"},
		"a fractional step":    {body: `{"step": 1.5}`, wantErr: "is not"},
		"two values":           {body: `{"step": 1} {"step": 2}`, wantErr: "more than one JSON value"},
		"empty":                {body: ``, wantErr: "is not"},
		"too large":            {body: `{"step": 1, "epoch": 1` + strings.Repeat(" ", MaxReportBytes) + `}`, wantErr: "more than 1024"},
		"checkpoint not bool":  {body: `{"step": 1, "checkpoint": "yes"}`, wantErr: "is not"},
		"null step":            {body: `{"step": null}`, wantErr: `no "step"`},
		"an array":             {body: `[{"step": 1}]`, wantErr: "is not"},
		"checkpoint false":     {body: `{"step": 3, "checkpoint": false}`, want: Report{Step: 3}},
		"whitespace around it": {body: " \n{\"step\": 3}\n ", want: Report{Step: 3}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeReport([]byte(tc.body))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("DecodeReport = %+v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzDecodeReport: no body makes the parser panic, and whatever it
// accepts is a report with no negative number.
func FuzzDecodeReport(f *testing.F) {
	for _, seed := range []string{`{"step": 1}`, `{"step": 1200, "epoch": 3, "checkpoint": true}`, `{"step": -1}`, `{}`, `[`, `{"step": 1e30}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeReport(body)
		if err != nil {
			return
		}
		if r.Step < 0 || (r.Epoch != nil && *r.Epoch < 0) || len(body) > MaxReportBytes {
			t.Errorf("accepted %q as %+v", body, r)
		}
	})
}
