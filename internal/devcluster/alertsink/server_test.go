package alertsink

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// payload is a notification as Alertmanager's webhook sends it.
const payload = `{"version":"4","groupKey":"{}:{alertname=\"BackfillTFJobFailed\"}","truncatedAlerts":0,
"status":"firing","receiver":"backfill-dev-sink","groupLabels":{"alertname":"BackfillTFJobFailed","namespace":"ml-dev","tfjob":"mnist"},
"commonLabels":{},"commonAnnotations":{},"externalURL":"http://127.0.0.1:9093",
"alerts":[{"status":"firing","labels":{"alertname":"BackfillTFJobFailed","namespace":"ml-dev","tfjob":"mnist","severity":"warning"},
"annotations":{"summary":"TFJob ml-dev/mnist failed"},"startsAt":"2026-01-02T03:04:05Z","endsAt":"0001-01-01T00:00:00Z",
"generatorURL":"http://prometheus/graph","fingerprint":"abc"}]}`

func TestSinkRecordsNotifications(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notifications.jsonl")
	srv := httptest.NewServer(NewServer("", file).Handler)
	defer srv.Close()

	for range 2 {
		resp, err := http.Post(srv.URL+Path, "application/json", strings.NewReader(payload))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %s, want 200", Path, resp.Status)
		}
	}
	got, err := Read(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d notifications recorded, want 2: %+v", len(got), got)
	}
	n := got[0]
	if n.ReceivedAt.IsZero() {
		t.Error("the notification has no time of arrival")
	}
	n.ReceivedAt = time.Time{}
	want := Notification{
		Receiver:    "backfill-dev-sink",
		Status:      "firing",
		GroupLabels: map[string]string{"alertname": "BackfillTFJobFailed", "namespace": "ml-dev", "tfjob": "mnist"},
		Alerts: []Alert{{
			Status:      "firing",
			Labels:      map[string]string{"alertname": "BackfillTFJobFailed", "namespace": "ml-dev", "tfjob": "mnist", "severity": "warning"},
			Annotations: map[string]string{"summary": "TFJob ml-dev/mnist failed"},
			StartsAt:    time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			EndsAt:      time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
			Fingerprint: "abc",
		}},
	}
	if diff := cmp.Diff(want, n); diff != "" {
		t.Errorf("notification (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"BackfillTFJobFailed"}, n.AlertNames()); diff != "" {
		t.Errorf("alert names (-want +got):\n%s", diff)
	}
}

func TestSinkRefusesWhatIsNotANotification(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notifications.jsonl")
	srv := httptest.NewServer(NewServer("", file).Handler)
	defer srv.Close()

	resp, err := http.Post(srv.URL+Path, "application/json", strings.NewReader("not json"))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("POST of a non-JSON body: %s, want 400", resp.Status)
	}
	got, err := Read(file)
	if err != nil || len(got) != 0 {
		t.Errorf("Read after a refused post: %v, %+v; want nothing recorded", err, got)
	}
}

func TestReadWithoutFile(t *testing.T) {
	got, err := Read(filepath.Join(t.TempDir(), "missing.jsonl"))
	if err != nil || got != nil {
		t.Errorf("Read of a missing file: %+v, %v; want none and no error", got, err)
	}
}
