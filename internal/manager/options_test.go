package manager

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestReportFlags: the report flags parse, and Validate says what is
// wrong with them and how to fix it.
func TestReportFlags(t *testing.T) {
	cases := map[string]flagCase{
		"off by default":       {},
		"on":                   {args: []string{"--report-bind-address=:9443", "--report-cert-dir=/certs", "--report-url=https://backfill-reports.backfill-system.svc:9443"}},
		"on, URL with a slash": {args: []string{"--report-bind-address=127.0.0.1:9443", "--report-cert-dir=/certs", "--report-url=https://127.0.0.1:9443/"}},
		"no cert dir":          {args: []string{"--report-bind-address=:9443", "--report-url=https://r:9443"}, wantErr: "needs --report-cert-dir"},
		"no URL":               {args: []string{"--report-bind-address=:9443", "--report-cert-dir=/certs"}, wantErr: "needs --report-url"},
		"no port":              {args: []string{"--report-bind-address=localhost", "--report-cert-dir=/certs", "--report-url=https://r:9443"}, wantErr: "want host:port"},
		"http":                 {args: []string{"--report-bind-address=:9443", "--report-cert-dir=/certs", "--report-url=http://r:9443"}, wantErr: "want an https URL"},
		"a path":               {args: []string{"--report-bind-address=:9443", "--report-cert-dir=/certs", "--report-url=https://r:9443/reports"}, wantErr: "with no path"},
		"not a URL":            {args: []string{"--report-bind-address=:9443", "--report-cert-dir=/certs", "--report-url=r:9443"}, wantErr: "want an https URL"},
		"a URL while off":      {args: []string{"--report-url=https://r:9443"}, wantErr: "need --report-bind-address"},
		"a cert dir while off": {args: []string{"--report-cert-dir=/certs"}, wantErr: "need --report-bind-address"},
		"review limits":        {args: append(reportsOn, "--report-token-reviews-per-second=0.5", "--report-token-reviews-in-flight=1")},
		"no review rate":       {args: append(reportsOn, "--report-token-reviews-per-second=0"), wantErr: "--report-token-reviews-per-second=0: must be above 0"},
		"no review in flight":  {args: append(reportsOn, "--report-token-reviews-in-flight=0"), wantErr: "--report-token-reviews-in-flight=0: must be from 1 to 1000"},
		"reviews by thousands": {args: append(reportsOn, "--report-token-reviews-in-flight=1001"), wantErr: "must be from 1 to 1000"},
	}
	runFlagCases(t, cases)
}

// TestGPULoanFlags: the GPU loan flags parse, and Validate names the one
// that is wrong.
func TestGPULoanFlags(t *testing.T) {
	cases := map[string]flagCase{
		"on by default":             {},
		"off, bad settings ignored": {args: []string{"--gpu-loans=false", "--gpu-loan-interval=0s"}},
		"tuned":                     {args: []string{"--gpu-loan-interval=10s", "--gpu-loan-checkpoint-time=5m", "--gpu-loan-warm-up=90s", "--gpu-loan-lead=0s", "--gpu-loan-min-loan=30m"}},
		"no interval":               {args: []string{"--gpu-loan-interval=0s"}, wantErr: "--gpu-loan-interval=0s: must be at least 1s"},
		"no checkpoint":             {args: []string{"--gpu-loan-checkpoint-time=0s"}, wantErr: "--gpu-loan-checkpoint-time=0s: must be positive"},
		"negative warm-up":          {args: []string{"--gpu-loan-warm-up=-1m"}, wantErr: "--gpu-loan-warm-up=-1m0s: must not be negative"},
		"negative lead":             {args: []string{"--gpu-loan-lead=-1m"}, wantErr: "--gpu-loan-lead=-1m0s: must not be negative"},
		"negative loan":             {args: []string{"--gpu-loan-min-loan=-1m"}, wantErr: "--gpu-loan-min-loan=-1m0s: must not be negative"},
	}
	runFlagCases(t, cases)
}

// reportsOn are the flags that turn reports on.
var reportsOn = []string{"--report-bind-address=:9443", "--report-cert-dir=/certs", "--report-url=https://r:9443"}

// TestReportAccess: pods get the base URL without a trailing slash and the
// CA of the cert dir; a missing or empty CA is an error naming the files.
func TestReportAccess(t *testing.T) {
	dir := t.TempDir()
	opts := Options{ReportAddress: ":9443", ReportCertDir: dir, ReportURL: "https://r.backfill-system.svc:9443/"}
	if _, err := reportAccess(opts); err == nil || !strings.Contains(err.Error(), "ca.crt") {
		t.Errorf("no ca.crt: %v, want an error naming it", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := reportAccess(opts); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a ca.crt that is not PEM: %v", err)
	}
	ca := selfSignedPEM(t)
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	access, err := reportAccess(opts)
	if err != nil {
		t.Fatal(err)
	}
	if access.BaseURL != "https://r.backfill-system.svc:9443" || string(access.CA) != string(ca) {
		t.Errorf("access %q with CA %q", access.BaseURL, access.CA)
	}
}

// selfSignedPEM is a new self-signed certificate, in PEM.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestPacingFlags: --kube-api-qps is 0, -1 or a rate; --kube-api-burst
// holds at least a second of that rate; --workers is bounded. Validate
// says what is wrong before anything contacts the cluster.
func TestPacingFlags(t *testing.T) {
	cases := map[string]flagCase{
		"auto by default":        {},
		"auto":                   {args: []string{"--kube-api-qps=0"}},
		"no client-side limit":   {args: []string{"--kube-api-qps=-1"}},
		"no limit, burst unused": {args: []string{"--kube-api-qps=-1", "--kube-api-burst=1"}},
		"a rate":                 {args: []string{"--kube-api-qps=50", "--kube-api-burst=100"}},
		"a rate, burst equal":    {args: []string{"--kube-api-qps=0.5", "--kube-api-burst=1"}},
		"another negative":       {args: []string{"--kube-api-qps=-2"}, wantErr: "--kube-api-qps=-2: must be 0"},
		"a negative fraction":    {args: []string{"--kube-api-qps=-0.5"}, wantErr: "--kube-api-qps=-0.5: must be 0"},
		"not a number":           {args: []string{"--kube-api-qps=NaN"}, wantErr: "--kube-api-qps=NaN: must be 0"},
		"infinite":               {args: []string{"--kube-api-qps=+Inf"}, wantErr: "--kube-api-qps=+Inf: must be 0"},
		"burst of 0":             {args: []string{"--kube-api-burst=0"}, wantErr: "--kube-api-burst=0: must be at least 1"},
		"burst below the rate":   {args: []string{"--kube-api-qps=500", "--kube-api-burst=400"}, wantErr: "--kube-api-burst=400 is below --kube-api-qps=500"},
		"burst below a fraction": {args: []string{"--kube-api-qps=1.5", "--kube-api-burst=1"}, wantErr: "set it to at least 2"},
		"one worker":             {args: []string{"--workers=1"}},
		"a thousand workers":     {args: []string{"--workers=1000"}},
		"no workers":             {args: []string{"--workers=0"}, wantErr: "--workers=0: must be from 1 to 1000"},
		"too many workers":       {args: []string{"--workers=1001"}, wantErr: "--workers=1001: must be from 1 to 1000"},
		"pprof on loopback":      {args: []string{"--pprof-bind-address=127.0.0.1:6060"}},
		"pprof off":              {args: []string{"--pprof-bind-address=0"}},
		"pprof without a port":   {args: []string{"--pprof-bind-address=localhost"}, wantErr: "--pprof-bind-address=\"localhost\": want host:port"},
	}
	runFlagCases(t, cases)
}

// TestRetireAfterFlag: --retire-after is a duration of 0 or more.
func TestRetireAfterFlag(t *testing.T) {
	runFlagCases(t, map[string]flagCase{
		"ten minutes by default": {},
		"at once":                {args: []string{"--retire-after=0"}},
		"an hour":                {args: []string{"--retire-after=1h"}},
		"negative":               {args: []string{"--retire-after=-1m"}, wantErr: "--retire-after=-1m0s: must be 0 or more"},
	})
}

// flagCase is a command line and the error Validate must give ("" for
// none).
type flagCase struct {
	args    []string
	wantErr string
}

// runFlagCases parses each case's flags and checks what Validate says.
func runFlagCases(t *testing.T, cases map[string]flagCase) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := DefaultOptions()
			fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
			opts.bindFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := opts.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Validate = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}
