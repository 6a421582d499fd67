package alertrelay

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// update rewrites the golden files: go test ./internal/alertrelay -update.
var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func TestRenderFixture(t *testing.T) {
	msg := Render(readFixture(t), maxWeComBytes)
	if want := "[FIRING:2 RESOLVED:1] BackfillTFJobFailed"; msg.Title != want {
		t.Errorf("Title %q, want %q", msg.Title, want)
	}
	golden := "testdata/notification.md.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(msg.Text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("Reading %s (run with -update to create it): %v", golden, err)
	}
	if diff := cmp.Diff(string(want), msg.Text); diff != "" {
		t.Errorf("%s differs (-want +got; run with -update if the change is intended):\n%s", golden, diff)
	}
}

// Firing alerts come first; the resolved one shows when it ended.
func TestRenderOrdersFiringFirst(t *testing.T) {
	text := Render(readFixture(t), maxWeComBytes).Text
	mnist, bert, resnet := strings.Index(text, "tfjob: mnist"), strings.Index(text, "tfjob: bert"), strings.Index(text, "tfjob: resnet")
	if mnist < 0 || bert < 0 || resnet < 0 || mnist > bert || bert > resnet {
		t.Errorf("Order of mnist, bert, resnet: %d, %d, %d; want firing mnist and bert before resolved resnet", mnist, bert, resnet)
	}
	if !strings.Contains(text, "- resolved: 2026-03-02 08:10:00 UTC") {
		t.Errorf("The resolved alert shows no end:\n%s", text)
	}
}

// manyAlerts is a notification of n firing alerts with Chinese text, so
// that a cut could fall inside a multi-byte rune.
func manyAlerts(n int) *Notification {
	notif := &Notification{Version: "4", Status: StatusFiring, Receiver: "wecom",
		GroupLabels: map[string]string{"alertname": "BackfillTFJobFailed"}}
	for i := range n {
		notif.Alerts = append(notif.Alerts, Alert{
			Status:      StatusFiring,
			Labels:      map[string]string{"alertname": "BackfillTFJobFailed", "namespace": "team-a", "tfjob": fmt.Sprintf("job-%03d", i)},
			Annotations: map[string]string{"summary": fmt.Sprintf("训练任务 team-a/job-%03d 失败", i)},
			StartsAt:    time.Date(2026, 3, 2, 8, 0, i, 0, time.UTC),
		})
	}
	return notif
}

func TestRenderTruncatesToTheLimit(t *testing.T) {
	for _, total := range []int{1, 10, 50, 200} {
		for _, truncated := range []int{0, 7} {
			t.Run(fmt.Sprintf("%d alerts, %d truncated by Alertmanager", total, truncated), func(t *testing.T) {
				n := manyAlerts(total)
				n.TruncatedAlerts = truncated
				text := Render(n, maxWeComBytes).Text
				if len(text) > maxWeComBytes {
					t.Fatalf("%d bytes, over the limit of %d", len(text), maxWeComBytes)
				}
				if !utf8.ValidString(text) {
					t.Fatal("The message is not valid UTF-8")
				}
				shown := strings.Count(text, "FIRING 告警")
				if shown == 0 {
					t.Fatal("No alert shown")
				}
				leftOut := total - shown + truncated
				for i := range shown {
					if !strings.Contains(text, fmt.Sprintf("tfjob: job-%03d", i)) {
						t.Errorf("Alert %d is not among the %d shown", i, shown)
					}
				}
				wantNote := fmt.Sprintf("and %d more alerts not shown", leftOut)
				if leftOut == 1 {
					wantNote = "and 1 more alert not shown"
				}
				if got := strings.Contains(text, wantNote); got != (leftOut > 0) {
					t.Errorf("Note %q shown: %v, want %v (%d shown):\n%s", wantNote, got, leftOut > 0, shown, text)
				}
				if !strings.HasSuffix(text, "Alertmanager · receiver wecom\n") {
					t.Errorf("The footer is missing:\n%s", text[max(0, len(text)-200):])
				}
			})
		}
	}
	// 200 alerts do not fit: the message is full, not short.
	if text := Render(manyAlerts(200), maxWeComBytes).Text; len(text) < maxWeComBytes-400 {
		t.Errorf("200 alerts rendered in %d bytes, far below the limit of %d", len(text), maxWeComBytes)
	}
}

// One alert larger than the limit is cut inside, at a rune boundary.
func TestRenderCutsAnAlertTooLargeAlone(t *testing.T) {
	n := manyAlerts(3)
	n.Alerts[0].Annotations["description"] = strings.Repeat("节点内存不足。", 1000)
	for _, limit := range []int{maxWeComBytes, maxWeComBytes - 1, maxWeComBytes - 2} {
		text := Render(n, limit).Text
		if len(text) > limit || !utf8.ValidString(text) {
			t.Errorf("Limit %d: %d bytes, valid UTF-8 %v", limit, len(text), utf8.ValidString(text))
		}
		if !strings.Contains(text, "job-000") || !strings.Contains(text, "…\n\n") {
			t.Errorf("Limit %d: the first alert's beginning and the cut mark are missing", limit)
		}
		if !strings.Contains(text, "and 2 more alerts not shown") {
			t.Errorf("Limit %d: the note of the 2 others is missing", limit)
		}
	}
}

func TestCutAtRune(t *testing.T) {
	s := "ab告警" // 2 + 3 + 3 bytes
	for n, want := range map[int]string{0: "", 2: "ab", 3: "ab", 4: "ab", 5: "ab告", 7: "ab告", 8: s, 100: s} {
		if got := cutAtRune(s, n); got != want {
			t.Errorf("cutAtRune(%q, %d) = %q, want %q", s, n, got, want)
		}
	}
}
