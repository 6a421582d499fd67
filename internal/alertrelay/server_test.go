package alertrelay

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	dingTalkToken  = "ding-token-3f9a"
	dingTalkSecret = "SECd1ngs3cr3t"
	weComKey       = "wecom-key-77b1"
)

// fakeDingTalk acts as a DingTalk custom robot with signing on: it
// recomputes the signature from the secret it knows, refuses timestamps
// more than an hour from its clock, and answers errcode 310000 for
// either, as the real robot does.
type fakeDingTalk struct {
	mu       sync.Mutex
	messages []map[string]string
}

func (f *fakeDingTalk) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	answer := func(code int, msg string) { fmt.Fprintf(w, `{"errcode":%d,"errmsg":%q}`, code, msg) }
	if q.Get("access_token") != dingTalkToken {
		answer(300001, "token is not exist")
		return
	}
	ts, err := strconv.ParseInt(q.Get("timestamp"), 10, 64)
	if err != nil {
		answer(310000, "sign not match: no timestamp")
		return
	}
	if d := time.Since(time.UnixMilli(ts)); d > time.Hour || d < -time.Hour {
		answer(310000, "sign not match: timestamp more than an hour away")
		return
	}
	// Computed here, apart from DingTalkSign, as the robot would.
	mac := hmac.New(sha256.New, []byte(dingTalkSecret))
	mac.Write([]byte(q.Get("timestamp") + "\n" + dingTalkSecret))
	if !hmac.Equal([]byte(q.Get("sign")), []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))) {
		answer(310000, "sign not match")
		return
	}
	var body struct {
		MsgType  string            `json:"msgtype"`
		Markdown map[string]string `json:"markdown"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.MsgType != "markdown" || body.Markdown["title"] == "" || body.Markdown["text"] == "" {
		answer(40035, "bad message")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.messages = append(f.messages, body.Markdown)
	answer(0, "ok")
}

func (f *fakeDingTalk) received() []map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]string(nil), f.messages...)
}

// fakeWeCom acts as a WeCom group robot: it checks the key and the
// markdown content's size, and refuses with refuseCode when set.
type fakeWeCom struct {
	mu         sync.Mutex
	contents   []string
	refuseCode int
}

func (f *fakeWeCom) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	answer := func(code int, msg string) { fmt.Fprintf(w, `{"errcode":%d,"errmsg":%q}`, code, msg) }
	var body struct {
		MsgType  string            `json:"msgtype"`
		Markdown map[string]string `json:"markdown"`
	}
	switch {
	case r.URL.Query().Get("key") != weComKey:
		answer(93000, "invalid webhook url")
	case json.NewDecoder(r.Body).Decode(&body) != nil || body.MsgType != "markdown" || body.Markdown["content"] == "":
		answer(40008, "invalid message type")
	case len(body.Markdown["content"]) > maxWeComBytes:
		answer(40058, "content exceeds the limit")
	case f.refuseCode != 0:
		answer(f.refuseCode, "refused by the test")
	default:
		f.contents = append(f.contents, body.Markdown["content"])
		answer(0, "ok")
	}
}

// relay runs the relay as `backfill alert-relay` does, on a free port of
// 127.0.0.1, until the test ends, and returns its base URL. At the end
// it checks that the log shows no token or secret.
func relay(t *testing.T, opts Options) string {
	t.Helper()
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, opts, l, testLogger(logs)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		for _, secret := range []string{dingTalkToken, dingTalkSecret, weComKey} {
			if strings.Contains(logs.String(), secret) {
				t.Errorf("The log shows the robot's token or secret %q:\n%s", secret, logs.String())
			}
		}
	})
	return "http://" + l.Addr().String()
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func testLogger(w io.Writer) logr.Logger {
	return funcr.New(func(prefix, args string) { fmt.Fprintln(w, prefix, args) }, funcr.Options{Verbosity: 1})
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func fixture(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("testdata/notification.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func expectReply(t *testing.T, what string, gotStatus int, gotBody string, wantStatus int, wantBody string) {
	t.Helper()
	if gotStatus != wantStatus || !strings.Contains(gotBody, wantBody) {
		t.Errorf("%s: HTTP %d %q, want HTTP %d with %q", what, gotStatus, gotBody, wantStatus, wantBody)
	}
	for _, secret := range []string{dingTalkToken, dingTalkSecret, weComKey} {
		if strings.Contains(gotBody, secret) {
			t.Errorf("%s: the reply shows %q: %s", what, secret, gotBody)
		}
	}
}

// The relay signs for DingTalk, and a rotated secret file takes effect
// at the next notification, without a restart.
func TestRelayToDingTalk(t *testing.T) {
	robot := &fakeDingTalk{}
	srv := httptest.NewServer(robot)
	defer srv.Close()
	dir := t.TempDir()
	opts := DefaultOptions()
	opts.DingTalkURLFile = writeFile(t, dir, "url", srv.URL+"/robot/send?access_token="+dingTalkToken+"\n")
	opts.DingTalkSecretFile = writeFile(t, dir, "secret", dingTalkSecret+"\n")
	base := relay(t, opts)

	status, body := post(t, base+"/dingtalk", fixture(t))
	expectReply(t, "Signed notification", status, body, http.StatusOK, "delivered")
	got := robot.received()
	if len(got) != 1 {
		t.Fatalf("The robot received %d messages, want 1", len(got))
	}
	if got[0]["title"] != "[FIRING:2 RESOLVED:1] BackfillTFJobFailed" || !strings.Contains(got[0]["text"], "tfjob: mnist") {
		t.Errorf("The robot received %q", got[0])
	}

	writeFile(t, dir, "secret", "SECsomeotherrobot")
	status, body = post(t, base+"/dingtalk", fixture(t))
	expectReply(t, "Wrong secret", status, body, http.StatusBadGateway, "errcode 310000: sign not match")

	writeFile(t, dir, "secret", dingTalkSecret)
	status, body = post(t, base+"/dingtalk", fixture(t))
	expectReply(t, "Secret rotated back", status, body, http.StatusOK, "delivered")

	if err := os.Remove(opts.DingTalkURLFile); err != nil {
		t.Fatal(err)
	}
	status, body = post(t, base+"/dingtalk", fixture(t))
	expectReply(t, "URL file gone", status, body, http.StatusInternalServerError, "--dingtalk-url-file="+opts.DingTalkURLFile+": no such file")

	if n := len(robot.received()); n != 2 {
		t.Errorf("The robot received %d messages, want 2", n)
	}
	metrics := get(t, base+"/metrics")
	for _, want := range []string{
		`backfill_alert_relay_notifications_total{result="delivered",robot="dingtalk"} 2`,
		`backfill_alert_relay_notifications_total{result="refused",robot="dingtalk"} 1`,
		`backfill_alert_relay_notifications_total{result="misconfigured",robot="dingtalk"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// A signature more than an hour old is refused, and the relay answers
// 5xx so that Alertmanager retries.
func TestRelayStaleDingTalkSignature(t *testing.T) {
	srv := httptest.NewServer(&fakeDingTalk{})
	defer srv.Close()
	dir := t.TempDir()
	robot := &DingTalk{
		URLFile:    writeFile(t, dir, "url", srv.URL+"/robot/send?access_token="+dingTalkToken),
		SecretFile: writeFile(t, dir, "secret", dingTalkSecret),
		Client:     srv.Client(),
		Now:        func() time.Time { return time.Now().Add(-2 * time.Hour) },
	}
	h, err := NewHandler([]Robot{robot}, prometheus.NewRegistry(), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	relaySrv := httptest.NewServer(h)
	defer relaySrv.Close()
	status, body := post(t, relaySrv.URL+"/dingtalk", fixture(t))
	expectReply(t, "Stale signature", status, body, http.StatusBadGateway, "errcode 310000")
}

// WeCom gets the notification cut to 4096 bytes; its refusals, an
// unreachable robot, bad payloads and unconfigured routes are answered
// as Alertmanager needs.
func TestRelayToWeCom(t *testing.T) {
	robot := &fakeWeCom{}
	srv := httptest.NewServer(robot)
	defer srv.Close()
	dir := t.TempDir()
	opts := DefaultOptions()
	opts.WeComURLFile = writeFile(t, dir, "url", srv.URL+"/cgi-bin/webhook/send?key="+weComKey)
	base := relay(t, opts)

	many, err := json.Marshal(manyAlerts(150))
	if err != nil {
		t.Fatal(err)
	}
	status, body := post(t, base+"/wecom", string(many))
	expectReply(t, "150 alerts", status, body, http.StatusOK, "delivered")
	robot.mu.Lock()
	contents := robot.contents
	robot.mu.Unlock()
	if len(contents) != 1 || !strings.Contains(contents[0], "more alerts not shown") {
		t.Fatalf("The robot received %q, want one message with a note of the alerts left out", contents)
	}

	robot.mu.Lock()
	robot.refuseCode = 45009
	robot.mu.Unlock()
	status, body = post(t, base+"/wecom", fixture(t))
	expectReply(t, "Refused", status, body, http.StatusBadGateway, "the wecom robot refused the message: errcode 45009")

	status, body = post(t, base+"/wecom", `{"version":"4","status":"firing","alerts":[`)
	expectReply(t, "Malformed payload", status, body, http.StatusBadRequest, "bad Alertmanager payload: not JSON")
	status, body = post(t, base+"/wecom", `{"version":"4","status":"firing","alerts":[]}`)
	expectReply(t, "No alerts", status, body, http.StatusBadRequest, "no alerts")
	status, body = post(t, base+"/wecom", `{"version":"4","receiver":"`+strings.Repeat("x", maxBodyBytes)+`"}`)
	expectReply(t, "Huge body", status, body, http.StatusRequestEntityTooLarge, "over 1048576 bytes")
	status, body = post(t, base+"/dingtalk", fixture(t))
	expectReply(t, "Unconfigured robot", status, body, http.StatusNotFound, "no DingTalk robot is configured: start the relay with --dingtalk-url-file")
	resp, err := http.Get(base + "/wecom")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /wecom: HTTP %d, want 405", resp.StatusCode)
	}
	if got := get(t, base+"/healthz"); got != "ok\n" {
		t.Errorf("/healthz: %q", got)
	}

	srv.Close()
	status, body = post(t, base+"/wecom", fixture(t))
	expectReply(t, "Unreachable robot", status, body, http.StatusBadGateway, "posting to the wecom robot at "+srv.URL+"/cgi-bin/webhook/send")

	metrics := get(t, base+"/metrics")
	for _, want := range []string{
		`backfill_alert_relay_notifications_total{result="delivered",robot="wecom"} 1`,
		`backfill_alert_relay_notifications_total{result="refused",robot="wecom"} 1`,
		`backfill_alert_relay_notifications_total{result="invalid",robot="wecom"} 3`,
		`backfill_alert_relay_notifications_total{result="unreachable",robot="wecom"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: HTTP %d %s", url, resp.StatusCode, data)
	}
	return string(data)
}

func TestOptionsValidate(t *testing.T) {
	dir := t.TempDir()
	url := writeFile(t, dir, "url", "https://robot.example.com/robot/send?access_token=abc")
	cases := map[string]struct {
		change func(*Options)
		want   string
	}{
		"no robot":         {change: func(*Options) {}, want: "no robot is configured: give --dingtalk-url-file, --wecom-url-file or both"},
		"secret alone":     {change: func(o *Options) { o.DingTalkSecretFile = url }, want: "--dingtalk-secret-file without --dingtalk-url-file"},
		"missing file":     {change: func(o *Options) { o.WeComURLFile = dir + "/absent" }, want: "--wecom-url-file=" + dir + "/absent: no such file"},
		"missing secret":   {change: func(o *Options) { o.DingTalkURLFile = url; o.DingTalkSecretFile = dir + "/absent" }, want: "--dingtalk-secret-file=" + dir + "/absent: no such file"},
		"wecom url no key": {change: func(o *Options) { o.WeComURLFile = url }, want: "the URL has no key parameter"},
		"bad listen":       {change: func(o *Options) { o.DingTalkURLFile = url; o.Listen = "8080" }, want: `--listen="8080": want host:port or :port`},
		"bad timeout":      {change: func(o *Options) { o.DingTalkURLFile = url; o.Timeout = 0 }, want: "--timeout=0s: must be positive"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			tc.change(&o)
			if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	o := DefaultOptions()
	o.DingTalkURLFile = url
	if err := o.Validate(); err != nil {
		t.Errorf("A DingTalk robot without a secret: %v", err)
	}
}
