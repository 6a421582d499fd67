package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/backfill-dev/backfill/internal/doctor"
)

func TestPrintDoctorText(t *testing.T) {
	results := []doctor.Result{
		{Check: doctor.CheckCRD, Status: doctor.StatusOK, Finding: "served"},
		{Check: doctor.CheckPendingResources, Status: doctor.StatusFail, Object: "tfjob a/b", Finding: "needs 16 nvidia.com/gpu per pod", Fix: "ask for less"},
		{Check: "prometheus", Status: doctor.StatusSkip, Finding: "skipped", Fix: "pass --prometheus-url"},
	}
	var out bytes.Buffer
	if err := printDoctor(&out, "", results); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"OK    tfjob-crd          served",
		"FAIL  pending-resources  tfjob a/b: needs 16 nvidia.com/gpu per pod",
		"                         fix: ask for less",
		"SKIP  prometheus         skipped",
		"                         fix: pass --prometheus-url",
		"",
		"1 FAIL, 0 WARN, 1 OK, 1 SKIP",
		"",
	}, "\n")
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("text output (-want +got):\n%s", diff)
	}
}

func TestPrintDoctorJSON(t *testing.T) {
	results := []doctor.Result{
		{Check: doctor.CheckCrashLoop, Status: doctor.StatusFail, Object: "pod a/b-worker-0", Finding: "CrashLoopBackOff", Fix: "request a GPU"},
		{Check: doctor.CheckGPUNodes, Status: doctor.StatusWarn, Finding: "1 GPU pod waits"},
	}
	var out bytes.Buffer
	if err := printDoctor(&out, "json", results); err != nil {
		t.Fatal(err)
	}
	var got doctorReport
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	want := doctorReport{Results: results, Summary: map[doctor.Status]int{doctor.StatusFail: 1, doctor.StatusWarn: 1}, Failed: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON report (-want +got):\n%s", diff)
	}
}

func TestDoctorOptionsValidate(t *testing.T) {
	cases := map[string]struct {
		opts    doctorOptions
		job     string
		wantErr string
	}{
		"defaults":             {opts: doctorOptions{logTail: 200, offlinePriorityClass: "backfill-offline"}},
		"json and a URL":       {opts: doctorOptions{output: "json", prometheusURL: "https://prom.example:9090/", logTail: 1, offlinePriorityClass: "x"}},
		"yaml":                 {opts: doctorOptions{output: "yaml", logTail: 200, offlinePriorityClass: "x"}, wantErr: `--output="yaml": must be text or json`},
		"a URL without scheme": {opts: doctorOptions{prometheusURL: "prom:9090", logTail: 200, offlinePriorityClass: "x"}, wantErr: "must be an http:// or https:// URL"},
		"no offline class":     {opts: doctorOptions{logTail: 200}, wantErr: "--offline-priority-class is empty"},
		"a huge log tail":      {opts: doctorOptions{logTail: 10001, offlinePriorityClass: "x"}, wantErr: "--log-tail=10001"},
		"a job with -A":        {opts: doctorOptions{allNamespaces: true, logTail: 200, offlinePriorityClass: "x"}, job: "mnist", wantErr: "not with -A"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.opts.validate(tc.job)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("validate = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
