// Package python tests python/backfill_report.py, the helper training code
// reports its progress with, against an HTTPS server of its own CA, as the
// manager's report endpoint is.
package python

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// reportPath is where the operator points a job's BACKFILL_REPORT_URL.
const reportPath = "/v1/namespaces/research/tfjobs/mnist/progress"

// received is one request the server got.
type received struct {
	Method, Path, Authorization, ContentType string
	Body                                     map[string]any
	Size                                     int
}

// reportServer is the manager's report endpoint, answering from a script.
type reportServer struct {
	*httptest.Server
	caPEM string

	mu       sync.Mutex
	answers  []answer // in order; 204 once they run out
	requests []received
}

type answer struct {
	status     int
	reason     string
	retryAfter string
}

// newReportServer serves HTTPS with a certificate for 127.0.0.1 signed by a
// CA of its own, whose PEM it keeps for BACKFILL_REPORT_CA.
func newReportServer(t *testing.T, answers ...answer) *reportServer {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "backfill-reports-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "backfill-reports"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	s := &reportServer{answers: answers, caPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes a test makes fail on purpose
	s.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func (s *reportServer) serve(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
	got := received{Method: r.Method, Path: r.URL.Path, Authorization: r.Header.Get("Authorization"),
		ContentType: r.Header.Get("Content-Type"), Size: len(data)}
	if err := json.Unmarshal(data, &got.Body); err != nil {
		got.Body = map[string]any{"<not JSON>": string(data)}
	}
	s.mu.Lock()
	s.requests = append(s.requests, got)
	a := answer{status: http.StatusNoContent}
	if len(s.answers) > 0 {
		a, s.answers = s.answers[0], s.answers[1:]
	}
	s.mu.Unlock()
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	if a.status == http.StatusNoContent {
		w.WriteHeader(a.status)
		return
	}
	http.Error(w, a.reason, a.status)
}

func (s *reportServer) received() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.requests...)
}

// pythonRun is one run of python3 -c with the helper importable.
type pythonRun struct {
	env map[string]string
}

// newRun prepares a pod's environment: the report URL and CA of s and a
// token file holding token, whose path the code finds in TOKEN_FILE.
func newRun(t *testing.T, s *reportServer, token string) *pythonRun {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return &pythonRun{env: map[string]string{
		"BACKFILL_REPORT_URL": s.URL + reportPath,
		"BACKFILL_REPORT_CA":  s.caPEM,
		"TOKEN_FILE":          tokenFile,
	}}
}

// prelude imports the helper and points it at the test's token file.
const prelude = `
import json, os, sys
import backfill_report as b
if os.environ.get("TOKEN_FILE"):
    b.TOKEN_FILE = os.environ["TOKEN_FILE"]
`

// python3 finds python3 and fails the test, saying what to install, when
// it is missing: the helper is shipped, so it is tested everywhere.
func python3(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is not on PATH (%v): this test runs python/backfill_report.py; install Python 3.8 or newer, e.g. apt-get install python3 (Debian package python3)", err)
	}
	return path
}

// run runs code after the prelude and returns the JSON it printed last on
// stdout, decoded into out, and its stderr (the helper's warnings).
func (p *pythonRun) run(t *testing.T, code string, out any) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "python"))
	if err != nil {
		t.Fatal(err)
	}
	// Read by the test itself, so that go test's cache knows the result
	// depends on it: python3's reads are not seen.
	if _, err := os.ReadFile(filepath.Join(dir, "backfill_report.py")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python3(t), "-c", prelude+code)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PYTHONPATH=" + dir, "PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8"}
	for k, v := range p.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python3 -c failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), out); err != nil {
		t.Fatalf("python3 printed %q, not the JSON expected: %v\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	return stderr.String()
}

// The helper POSTs the contract's request, and tries again after a 429.
func TestReportPostsTheContractAndRetriesA429(t *testing.T) {
	s := newReportServer(t, answer{status: http.StatusTooManyRequests, reason: "too many reports from TFJob research/mnist: one a second", retryAfter: "0"})
	var ok bool
	stderr := newRun(t, s, "token-1").run(t, `print(json.dumps(b.report(1200, epoch=3, checkpoint=True, backoff=0.01)))`, &ok)
	if !ok {
		t.Errorf("report returned False after a 429 then a 204; stderr:\n%s", stderr)
	}
	want := received{Method: http.MethodPost, Path: reportPath, Authorization: "Bearer token-1", ContentType: "application/json",
		Body: map[string]any{"step": 1200.0, "epoch": 3.0, "checkpoint": true}}
	got := s.received()
	if len(got) != 2 {
		t.Fatalf("the server got %d requests, want 2 (a 429, then the retry): %+v", len(got), got)
	}
	for i, r := range got {
		if r.Size > 1024 {
			t.Errorf("request %d: a body of %d bytes, more than the 1 KiB the manager takes", i, r.Size)
		}
		r.Size = 0
		if diff := cmp.Diff(want, r); diff != "" {
			t.Errorf("request %d (-want +got):\n%s", i, diff)
		}
	}
	if stderr != "" {
		t.Errorf("a report delivered on the second try logged:\n%s", stderr)
	}
}

// A progress report leaves epoch out unless given, and says checkpoint
// false; the token is read at each report, as the kubelet renews it.
func TestReportReadsTheTokenEachTime(t *testing.T) {
	s := newReportServer(t)
	var results []bool
	newRun(t, s, "token-1").run(t, `
first = b.report(100)
with open(b.TOKEN_FILE, "w") as f:
    f.write("token-2\n")
print(json.dumps([first, b.report(200, epoch=0)]))
`, &results)
	if diff := cmp.Diff([]bool{true, true}, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	got := s.received()
	if len(got) != 2 {
		t.Fatalf("the server got %d requests, want 2: %+v", len(got), got)
	}
	if got[0].Authorization != "Bearer token-1" || got[1].Authorization != "Bearer token-2" {
		t.Errorf("tokens %q then %q, want Bearer token-1 then the renewed Bearer token-2", got[0].Authorization, got[1].Authorization)
	}
	if diff := cmp.Diff(map[string]any{"step": 100.0, "checkpoint": false}, got[0].Body); diff != "" {
		t.Errorf("progress report (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"step": 200.0, "epoch": 0.0, "checkpoint": false}, got[1].Body); diff != "" {
		t.Errorf("report of epoch 0 (-want +got):\n%s", diff)
	}
}

// A refusal is not tried again; its reason is logged, not raised.
func TestReportLogsARefusal(t *testing.T) {
	s := newReportServer(t, answer{status: http.StatusForbidden, reason: "the token is not of a pod of TFJob research/mnist"})
	var ok bool
	stderr := newRun(t, s, "token-1").run(t, `print(json.dumps(b.report(7, backoff=0.01)))`, &ok)
	if ok {
		t.Error("report returned True for a 403")
	}
	if n := len(s.received()); n != 1 {
		t.Errorf("the server got %d requests, want 1: a 403 is not retried", n)
	}
	for _, want := range []string{"HTTP 403", "the token is not of a pod of TFJob research/mnist"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the warning does not say %q:\n%s", want, stderr)
		}
	}
}

// A manager that keeps failing gets attempts tries; report then returns
// False, or raises ReportError when asked to.
func TestReportGivesUpWithoutRaising(t *testing.T) {
	unavailable := answer{status: http.StatusServiceUnavailable, reason: "the manager is starting"}
	s := newReportServer(t, unavailable, unavailable, unavailable, unavailable, unavailable, unavailable)
	var got struct {
		Quiet  bool `json:"quiet"`
		Status int  `json:"status"`
	}
	newRun(t, s, "token-1").run(t, `
quiet = b.report(9, attempts=3, backoff=0.01)
try:
    b.report(9, attempts=3, backoff=0.01, raise_errors=True)
    status = 0
except b.ReportError as err:
    status = err.status
print(json.dumps({"quiet": quiet, "status": status}))
`, &got)
	if got.Quiet || got.Status != http.StatusServiceUnavailable {
		t.Errorf("report returned %v and raised status %d, want False and ReportError with 503", got.Quiet, got.Status)
	}
	if n := len(s.received()); n != 6 {
		t.Errorf("the server got %d requests, want 3 tries of each report", n)
	}
}

// A server whose certificate BACKFILL_REPORT_CA does not sign is refused,
// and not tried again.
func TestReportVerifiesTheServer(t *testing.T) {
	s := newReportServer(t)
	other := newReportServer(t)
	run := newRun(t, s, "token-1")
	run.env["BACKFILL_REPORT_CA"] = other.caPEM
	var ok bool
	stderr := run.run(t, `print(json.dumps(b.report(1, backoff=0.01)))`, &ok)
	if ok || len(s.received()) != 0 {
		t.Errorf("report returned %v with %d requests delivered, want False and none", ok, len(s.received()))
	}
	if !strings.Contains(stderr, "BACKFILL_REPORT_CA") {
		t.Errorf("the warning does not point at BACKFILL_REPORT_CA:\n%s", stderr)
	}
}

// Without BACKFILL_REPORT_URL the helper does nothing, and importing it
// does not import TensorFlow: the same script runs anywhere.
func TestReportIsANoOpOutsideBackfill(t *testing.T) {
	s := newReportServer(t)
	run := newRun(t, s, "token-1")
	delete(run.env, "BACKFILL_REPORT_URL")
	var got []bool
	stderr := run.run(t, `print(json.dumps([b.enabled(), b.report(5, checkpoint=True, raise_errors=True), "tensorflow" in sys.modules]))`, &got)
	if diff := cmp.Diff([]bool{false, false, false}, got); diff != "" {
		t.Errorf("[enabled, report, tensorflow imported] (-want +got):\n%s", diff)
	}
	if n := len(s.received()); n != 0 || stderr != "" {
		t.Errorf("%d requests and stderr %q, want none", n, stderr)
	}
}

// stop_noticed reads the operator's notice from the downward-API file.
func TestStopNoticed(t *testing.T) {
	dir := t.TempDir()
	noticed := filepath.Join(dir, "noticed")
	quiet := filepath.Join(dir, "quiet")
	if err := os.WriteFile(noticed, []byte("backfill.dev/stop-at=\"2026-03-14T12:00:15Z\"\nbackfill.dev/stop-reason=\"TFJobSuspended\"\nkubernetes.io/config.seen=\"2026-03-14T11:00:00.000000000Z\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(quiet, []byte("kubernetes.io/config.seen=\"2026-03-14T11:00:00.000000000Z\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := &pythonRun{env: map[string]string{"NOTICED": noticed, "QUIET": quiet, "MISSING": filepath.Join(dir, "missing")}}
	var got []any
	run.run(t, `
n = b.stop_notice(os.environ["NOTICED"])
b.ANNOTATIONS_FILE = os.environ["QUIET"]
print(json.dumps([b.stop_noticed(os.environ["NOTICED"]), n.reason, n.at.isoformat(), b.stop_noticed(), b.stop_noticed(os.environ["MISSING"]), b.stopping()]))
`, &got)
	want := []any{true, "TFJobSuspended", "2026-03-14T12:00:15+00:00", false, false, false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("[noticed, reason, at, quiet, missing, stopping] (-want +got):\n%s", diff)
	}
}

// withFakeTensorFlow puts testdata/faketf, a stand-in for TensorFlow, on
// the run's path.
func (p *pythonRun) withFakeTensorFlow(t *testing.T) *pythonRun {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "faketf"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(filepath.Join(dir, "tensorflow", "__init__.py")); err != nil {
		t.Fatal(err)
	}
	p.env["FAKE_TF"] = dir
	return p
}

// fakeFit drives a callback as Keras's fit does: epochs of batches, the
// optimizer's iterations counting steps from a restored start.
const fakeFit = `
sys.path.insert(0, os.environ["FAKE_TF"])
class Iterations:
    def __init__(self, n): self.n = n
    def numpy(self): return self.n
class Model: pass
def fit(callback, epochs, batches, start=0):
    model = Model()
    model.optimizer = Model()
    model.optimizer.iterations = Iterations(start)
    callback.set_model(model)
    for epoch in range(epochs):
        callback.on_epoch_begin(epoch)
        for batch in range(batches):
            model.optimizer.iterations.n += 1
            callback.on_train_batch_end(batch)
        callback.on_epoch_end(epoch)  # after BackupAndRestore's, which saved
    callback.on_train_end()
`

// The Keras callback reports every N steps and each epoch's checkpoint,
// with Keras's epoch counted from 1.
func TestKerasCallback(t *testing.T) {
	s := newReportServer(t)
	var imported bool
	newRun(t, s, "token-1").withFakeTensorFlow(t).run(t, fakeFit+`
import tensorflow
before = "ReportCallback" in vars(b)
fit(b.ReportCallback(every_n_steps=2, min_interval=0), epochs=2, batches=5, start=100)
print(json.dumps(not before))
`, &imported)
	if !imported {
		t.Error("ReportCallback existed before it was asked for")
	}
	type sent struct {
		Step, Epoch float64
		Checkpoint  bool
	}
	var got []sent
	for _, r := range s.received() {
		got = append(got, sent{Step: r.Body["step"].(float64), Epoch: r.Body["epoch"].(float64), Checkpoint: r.Body["checkpoint"].(bool)})
	}
	want := []sent{
		{101, 1, false}, {103, 1, false}, {105, 1, false}, {105, 1, true}, // the first step after a restore, every 2, the epoch's checkpoint
		{107, 2, false}, {109, 2, false}, {110, 2, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

// Only the replica that writes the checkpoint reports.
func TestKerasCallbackOnAWorkerOfAChief(t *testing.T) {
	s := newReportServer(t)
	run := newRun(t, s, "token-1").withFakeTensorFlow(t)
	run.env["TF_CONFIG"] = `{"cluster": {"chief": ["c:2222"], "worker": ["w0:2222"]}, "task": {"type": "worker", "index": 0}}`
	var chief bool
	run.run(t, fakeFit+`
fit(b.ReportCallback(every_n_steps=1, min_interval=0), epochs=1, batches=3)
print(json.dumps(b.is_chief()))
`, &chief)
	if chief || len(s.received()) != 0 {
		t.Errorf("worker 0 beside a chief: is_chief %v, %d reports; want False and none", chief, len(s.received()))
	}
}

// termination_config watches SIGTERM and the stop notice, and its exit_fn
// reports the checkpoint the handler just saved, then exits 143.
func TestTerminationConfig(t *testing.T) {
	s := newReportServer(t)
	run := newRun(t, s, "token-1").withFakeTensorFlow(t)
	run.env["ANNOTATIONS"] = filepath.Join(t.TempDir(), "annotations")
	var got struct {
		Grace      int  `json:"grace"`
		BeforeTerm bool `json:"before"`
		AfterTerm  bool `json:"after"`
		ExitCode   int  `json:"exit"`
	}
	run.run(t, `
import signal, time
sys.path.insert(0, os.environ["FAKE_TF"])
b.ANNOTATIONS_FILE = os.environ["ANNOTATIONS"]
steps = [0]
config = b.termination_config(step=lambda: steps[0])
before = config.termination_watcher_fn()
os.kill(os.getpid(), signal.SIGTERM)
for _ in range(100):
    if config.termination_watcher_fn():
        break
    time.sleep(0.01)
after = config.termination_watcher_fn()
steps[0] = 4200
try:
    config.exit_fn()
    code = 0
except SystemExit as e:
    code = e.code
print(json.dumps({"grace": config.grace_period, "before": before, "after": after, "exit": code}))
`, &got)
	if got.Grace != 0 || got.BeforeTerm || !got.AfterTerm || got.ExitCode != 143 {
		t.Errorf("grace_period %d, stopping before SIGTERM %v, after %v, exit code %d; want 0, false, true, 143", got.Grace, got.BeforeTerm, got.AfterTerm, got.ExitCode)
	}
	r := s.received()
	if len(r) != 1 {
		t.Fatalf("%d reports, want the checkpoint's", len(r))
	}
	if diff := cmp.Diff(map[string]any{"step": 4200.0, "checkpoint": true}, r[0].Body); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}
