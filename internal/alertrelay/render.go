package alertrelay

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Message is a notification rendered as markdown, ready for a robot.
type Message struct {
	// Title is a one-line summary, e.g. "[FIRING:2] BackfillTFJobFailed":
	// what DingTalk shows in the chat list.
	Title string
	// Text is the markdown body.
	Text string
}

// The labels and annotations shown for each alert, besides alertname.
var (
	shownLabels      = []string{"namespace", "tfjob", "pod", "node"}
	shownAnnotations = []string{"summary", "description"}
)

// Render renders a notification as one message of at most limit bytes of
// UTF-8: firing alerts first, then resolved ones; the alerts that do not
// fit are counted in a closing note, with those Alertmanager itself left
// out (truncatedAlerts).
func Render(n *Notification, limit int) Message {
	title := titleOf(n)
	header := "### " + title + "\n\n"
	footer := footerOf(n)
	var blocks []string
	for _, a := range orderedAlerts(n.Alerts) {
		blocks = append(blocks, alertBlock(a))
	}
	return Message{Title: title, Text: fit(header, blocks, footer, n.TruncatedAlerts, limit)}
}

// titleOf counts the firing and resolved alerts and names the group by
// its alertname, e.g. "[FIRING:2 RESOLVED:1] BackfillTFJobFailed".
func titleOf(n *Notification) string {
	var firing, resolved int
	for _, a := range n.Alerts {
		if a.Status == StatusFiring {
			firing++
		} else {
			resolved++
		}
	}
	var counts []string
	if firing > 0 {
		counts = append(counts, fmt.Sprintf("FIRING:%d", firing))
	}
	if resolved > 0 {
		counts = append(counts, fmt.Sprintf("RESOLVED:%d", resolved))
	}
	name := n.GroupLabels["alertname"]
	if name == "" {
		name = n.CommonLabels["alertname"]
	}
	if name == "" {
		name = groupName(n.GroupLabels)
	}
	return strings.TrimSpace("[" + strings.Join(counts, " ") + "] " + name)
}

// groupName names a group without an alertname by its group labels.
func groupName(labels map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(labels) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, " ")
}

// orderedAlerts puts firing alerts before resolved ones, each in the
// order of the payload.
func orderedAlerts(alerts []Alert) []Alert {
	out := slices.Clone(alerts)
	slices.SortStableFunc(out, func(a, b Alert) int {
		return boolOrder(a.Status != StatusFiring) - boolOrder(b.Status != StatusFiring)
	})
	return out
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

// alertBlock is one alert's markdown: its state and name, severity, the
// summary and description, where it is, since when, and its source.
func alertBlock(a Alert) string {
	var b strings.Builder
	state := "🔥 **FIRING 告警**"
	if a.Status == StatusResolved {
		state = "✅ **RESOLVED 已恢复**"
	}
	name := a.Labels["alertname"]
	if name == "" {
		name = "(no alertname)"
	}
	fmt.Fprintf(&b, "%s %s", state, name)
	if sev := a.Labels["severity"]; sev != "" {
		fmt.Fprintf(&b, " · %s", sev)
	}
	b.WriteString("\n\n")
	for _, k := range shownAnnotations {
		if v := strings.TrimSpace(a.Annotations[k]); v != "" {
			fmt.Fprintf(&b, "> %s\n\n", strings.ReplaceAll(v, "\n", " "))
		}
	}
	var where []string
	for _, k := range shownLabels {
		if v := a.Labels[k]; v != "" {
			where = append(where, fmt.Sprintf("%s: %s", k, v))
		}
	}
	if len(where) > 0 {
		fmt.Fprintf(&b, "- %s\n", strings.Join(where, " · "))
	}
	fmt.Fprintf(&b, "- started: %s\n", formatTime(a.StartsAt))
	if a.Status == StatusResolved && !a.EndsAt.IsZero() {
		fmt.Fprintf(&b, "- resolved: %s\n", formatTime(a.EndsAt))
	}
	if a.GeneratorURL != "" {
		fmt.Fprintf(&b, "- [source](%s)\n", a.GeneratorURL)
	}
	b.WriteString("\n")
	return b.String()
}

// footerOf names where the notification came from. It always holds the
// word Alertmanager, which a DingTalk robot's keyword setting can require.
func footerOf(n *Notification) string {
	from := "Alertmanager"
	if n.ExternalURL != "" {
		from = fmt.Sprintf("[Alertmanager](%s)", n.ExternalURL)
	}
	if n.Receiver != "" {
		return fmt.Sprintf("%s · receiver %s\n", from, n.Receiver)
	}
	return from + "\n"
}

func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
