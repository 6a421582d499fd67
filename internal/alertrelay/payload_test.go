package alertrelay

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeFixture(t *testing.T) {
	n := readFixture(t)
	got := []string{n.Version, n.Status, n.Receiver, n.Alerts[0].Labels["tfjob"], n.Alerts[1].EndsAt.Format(time.RFC3339)}
	want := []string{"4", "firing", "backfill-dingtalk", "mnist", "2026-03-02T08:10:00Z"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decoded fields (-want +got):\n%s", diff)
	}
}

func TestDecodeRefusesBadPayloads(t *testing.T) {
	good := func(change func(string) string) string {
		data, err := os.ReadFile("testdata/notification.json")
		if err != nil {
			t.Fatal(err)
		}
		return change(string(data))
	}
	cases := map[string]struct {
		body string
		want string
	}{
		"not JSON":      {body: "alert!", want: "not JSON of Alertmanager's webhook format"},
		"two values":    {body: good(func(s string) string { return s + "{}" }), want: "more than one JSON value"},
		"other version": {body: good(func(s string) string { return strings.Replace(s, `"version": "4"`, `"version": "3"`, 1) }), want: `version "3": the relay reads version "4"`},
		"bad status": {body: good(func(s string) string {
			return strings.Replace(s, `"status": "firing",`+"\n  \"alerts\"", `"status": "burning",`+"\n  \"alerts\"", 1)
		}), want: `status "burning": must be firing or resolved`},
		"no alerts":   {body: `{"version":"4","status":"firing","alerts":[]}`, want: "no alerts"},
		"bad alert":   {body: `{"version":"4","status":"firing","alerts":[{"status":"on","startsAt":"2026-03-02T08:16:00Z"}]}`, want: `alerts[0].status "on"`},
		"no startsAt": {body: `{"version":"4","status":"firing","alerts":[{"status":"firing"}]}`, want: "alerts[0].startsAt is missing"},
		"wrong type":  {body: `{"version":4}`, want: "not JSON of Alertmanager's webhook format"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeNotification(strings.NewReader(tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Error %v, want one containing %q", err, tc.want)
			}
			if !errors.As(err, new(*PayloadError)) {
				t.Errorf("Error %T is no *PayloadError", err)
			}
		})
	}
}

func readFixture(t *testing.T) *Notification {
	t.Helper()
	f, err := os.Open("testdata/notification.json")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	n, err := DecodeNotification(f)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
