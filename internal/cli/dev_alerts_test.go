package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/backfill-dev/backfill/internal/devcluster"
	"github.com/backfill-dev/backfill/internal/devcluster/alertsink"
)

// fakeAlertmanager answers API v2's GET /api/v2/alerts as Alertmanager
// does, with one alert of a TFJob and one of a node.
func fakeAlertmanager(t *testing.T) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v2/alerts" || r.URL.Query().Get("active") != "true" || r.URL.Query().Get("silenced") != "false" {
			http.Error(w, "unexpected request "+r.URL.String(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, `[
 {"labels":{"alertname":"BackfillNodeAgentMissing","node":"cpu-0","severity":"warning"},"annotations":{},
  "startsAt":%q,"endsAt":%q,"updatedAt":%q,"fingerprint":"b2","receivers":[{"name":"backfill-dev-sink"}],
  "status":{"state":"active","silencedBy":[],"inhibitedBy":[],"mutedBy":[]}},
 {"labels":{"alertname":"BackfillTFJobFailed","namespace":"ml-dev","tfjob":"mnist","severity":"warning"},"annotations":{"summary":"TFJob ml-dev/mnist failed"},
  "startsAt":%q,"endsAt":%q,"updatedAt":%q,"fingerprint":"a1","receivers":[{"name":"backfill-dev-sink"}],
  "status":{"state":"active","silencedBy":[],"inhibitedBy":[],"mutedBy":[]}}]`,
			stamp(-2*time.Minute), stamp(time.Hour), stamp(0), stamp(-5*time.Minute), stamp(time.Hour), stamp(0))
	}))
}

func stamp(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339) }

// writeDevState records a running local cluster in dir, this test's own
// process standing for its `dev up`, and the sink's notifications.
func writeDevState(t *testing.T, dir, alertmanager string, notifications []alertsink.Notification) string {
	t.Helper()
	sink := filepath.Join(dir, "notifications.jsonl")
	var lines []byte
	for _, n := range notifications {
		line, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, line...), '\n')
	}
	if err := os.WriteFile(sink, lines, 0o644); err != nil {
		t.Fatal(err)
	}
	state := fmt.Sprintf(`{"pid": %d, "ready": true, "alertmanagerURL": %q, "alertSinkFile": %q}`, os.Getpid(), alertmanager, sink)
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	return sink
}

func notification(status string, at time.Time, names ...string) alertsink.Notification {
	n := alertsink.Notification{ReceivedAt: at, Receiver: "backfill-dev-sink", Status: status}
	for _, name := range names {
		n.Alerts = append(n.Alerts, alertsink.Alert{Status: status, Labels: map[string]string{"alertname": name}, StartsAt: at})
	}
	return n
}

// TestDevAlertsJSON: `dev alerts -o json` reads the Alertmanager and the
// sink file the state records, and reports both, the oldest alert first.
func TestDevAlertsJSON(t *testing.T) {
	am := fakeAlertmanager(t)
	defer am.Close()
	dir := t.TempDir()
	at := time.Date(2026, 3, 14, 11, 58, 0, 0, time.UTC)
	sink := writeDevState(t, dir, am.URL, []alertsink.Notification{notification("firing", at, "BackfillTFJobFailed")})

	root := NewRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"dev", "alerts", "-o", "json", "--state-dir", dir})
	if err := root.Execute(); err != nil {
		t.Fatalf("dev alerts: %v", err)
	}
	var got devAlerts
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("decoding the output: %v\n%s", err, out.String())
	}
	var names []string
	for _, a := range got.Firing {
		names = append(names, a.Name()+"@"+a.Labels["tfjob"]+a.Labels["node"])
	}
	if diff := cmp.Diff([]string{"BackfillTFJobFailed@mnist", "BackfillNodeAgentMissing@cpu-0"}, names); diff != "" {
		t.Errorf("firing alerts (-want +got):\n%s", diff)
	}
	if got.Alertmanager != am.URL || got.SinkFile != sink || len(got.Notifications) != 1 || got.Notifications[0].Status != "firing" {
		t.Errorf("report %+v, want Alertmanager %s and the one firing notification of %s", got, am.URL, sink)
	}
}

func TestDevAlertsTable(t *testing.T) {
	var notifications []alertsink.Notification
	for i := range devAlertsShown + 2 {
		at := time.Date(2026, 3, 14, 11, 0, i, 0, time.Local)
		status := "firing"
		if i%3 == 2 {
			status = "resolved"
		}
		notifications = append(notifications, notification(status, at, "BackfillNodeAgentMissing", "BackfillNodeAgentMissing"))
	}
	notifications = append(notifications, notification("firing", time.Date(2026, 3, 14, 11, 59, 0, 0, time.Local), "BackfillTFJobFailed"))
	var out bytes.Buffer
	printDevAlerts(&out, devAlerts{
		Alertmanager: "http://127.0.0.1:9093",
		SinkFile:     "/state/alertmanager/notifications.jsonl",
		Firing: []devcluster.ActiveAlert{
			{Labels: map[string]string{"alertname": "BackfillTFJobFailed", "namespace": "ml-dev", "tfjob": "mnist", "severity": "warning"}, StartsAt: fixedNow.Add(-5 * time.Minute)},
			{Labels: map[string]string{"alertname": "BackfillNodeAgentMissing", "node": "cpu-0", "severity": "warning"}, StartsAt: fixedNow.Add(-90 * time.Second)},
		},
		Notifications: notifications,
	}, fixedNow)
	checkGolden(t, "dev-alerts", out.String())
}

func TestDevAlertsWithoutCluster(t *testing.T) {
	dir := t.TempDir()
	root := NewRootCommand()
	root.SetOut(&bytes.Buffer{})
	root.SetArgs([]string{"dev", "alerts", "--state-dir", dir})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "no local cluster runs from "+dir) || !strings.Contains(err.Error(), "backfill dev up") {
		t.Errorf("dev alerts without a cluster: %v, want an error that says to start one with backfill dev up", err)
	}

	// A cluster whose dev up is gone: its recorded PID is no process.
	state := `{"pid": 2147483646, "alertmanagerURL": "http://127.0.0.1:1"}`
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	err = root.Execute()
	if err == nil || !strings.Contains(err.Error(), "is not running") {
		t.Errorf("dev alerts with a stopped cluster: %v, want an error that says it is not running", err)
	}
}

func TestDevAlertsRejectsUnknownOutput(t *testing.T) {
	root := NewRootCommand()
	root.SetOut(&bytes.Buffer{})
	root.SetArgs([]string{"dev", "alerts", "-o", "yaml", "--state-dir", t.TempDir()})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "use -o json") || !isUsageError(err) {
		t.Errorf("dev alerts -o yaml: %v, want a usage error naming -o json", err)
	}
}
