package alertsink

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// Notification is one webhook call of Alertmanager, as the sink records
// it: when it arrived and the part of Alertmanager's payload (version 4)
// that says who was told what.
type Notification struct {
	ReceivedAt  time.Time         `json:"receivedAt"`
	Receiver    string            `json:"receiver"`
	Status      string            `json:"status"` // firing or resolved
	GroupLabels map[string]string `json:"groupLabels"`
	Alerts      []Alert           `json:"alerts"`
}

// Alert is one alert of a notification.
type Alert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations,omitempty"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt,omitzero"`
	Fingerprint string            `json:"fingerprint,omitempty"`
}

// AlertNames are the distinct alertname labels of n's alerts, in order.
func (n Notification) AlertNames() []string {
	var names []string
	seen := map[string]bool{}
	for _, a := range n.Alerts {
		if name := a.Labels["alertname"]; !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names
}

// Read returns the notifications recorded in file, oldest first; none when
// the file does not exist yet (nothing was sent).
func Read(file string) ([]Notification, error) {
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []Notification
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), maxPayload+1024)
	for line := 1; sc.Scan(); line++ {
		var n Notification
		if err := json.Unmarshal(sc.Bytes(), &n); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", file, line, err)
		}
		out = append(out, n)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	return out, nil
}
