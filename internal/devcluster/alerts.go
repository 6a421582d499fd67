package devcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"
)

// ActiveAlert is an alert Alertmanager holds as active (firing, neither
// silenced nor inhibited), as its API v2 returns it.
type ActiveAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations,omitempty"`
	StartsAt    time.Time         `json:"startsAt"`
	Fingerprint string            `json:"fingerprint"`
	Receivers   []string          `json:"receivers"`
}

// Name is the alert's alertname.
func (a ActiveAlert) Name() string { return a.Labels["alertname"] }

// ActiveAlerts asks the Alertmanager at url (http://host:port) for its
// active alerts, oldest first.
func ActiveAlerts(ctx context.Context, url string) ([]ActiveAlert, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	u := url + "/api/v2/alerts?active=true&silenced=false&inhibited=false&unprocessed=false"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking Alertmanager at %s for its alerts: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("asking Alertmanager at %s for its alerts: %s", url, resp.Status)
	}
	var body []struct {
		ActiveAlert
		Receivers []struct {
			Name string `json:"name"`
		} `json:"receivers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("decoding Alertmanager's alerts: %w", err)
	}
	out := make([]ActiveAlert, 0, len(body))
	for _, b := range body {
		a := b.ActiveAlert
		a.Receivers = nil
		for _, r := range b.Receivers {
			a.Receivers = append(a.Receivers, r.Name)
		}
		out = append(out, a)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].StartsAt.Equal(out[j].StartsAt) {
			return out[i].StartsAt.Before(out[j].StartsAt)
		}
		return out[i].Fingerprint < out[j].Fingerprint
	})
	return out, nil
}
