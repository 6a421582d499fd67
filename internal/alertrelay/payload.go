package alertrelay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The statuses of a notification and of each of its alerts.
const (
	StatusFiring   = "firing"
	StatusResolved = "resolved"
)

// payloadVersion is the version of Alertmanager's webhook payload this
// relay reads.
const payloadVersion = "4"

// Notification is the body of an Alertmanager webhook request: one
// notification of an alert group.
type Notification struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   int               `json:"truncatedAlerts"`
	Status            string            `json:"status"`
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []Alert           `json:"alerts"`
}

// Alert is one alert of a notification.
type Alert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

// PayloadError is a notification the relay cannot read: a retry would
// not make it readable.
type PayloadError struct{ Reason string }

func (e *PayloadError) Error() string { return "bad Alertmanager payload: " + e.Reason }

// DecodeNotification reads and checks one webhook body. Unknown fields
// are ignored, so that a newer Alertmanager's additions pass.
func DecodeNotification(r io.Reader) (*Notification, error) {
	var n Notification
	dec := json.NewDecoder(r)
	if err := dec.Decode(&n); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, err
		}
		return nil, &PayloadError{Reason: fmt.Sprintf("not JSON of Alertmanager's webhook format: %v", err)}
	}
	if dec.More() {
		return nil, &PayloadError{Reason: "more than one JSON value in the body"}
	}
	if err := n.validate(); err != nil {
		return nil, err
	}
	return &n, nil
}

func (n *Notification) validate() error {
	if n.Version != payloadVersion {
		return &PayloadError{Reason: fmt.Sprintf("version %q: the relay reads version %q, which Alertmanager's webhook_configs send", n.Version, payloadVersion)}
	}
	if !validStatus(n.Status) {
		return &PayloadError{Reason: fmt.Sprintf("status %q: must be %s or %s", n.Status, StatusFiring, StatusResolved)}
	}
	if len(n.Alerts) == 0 {
		return &PayloadError{Reason: "no alerts: a notification carries at least one"}
	}
	for i, a := range n.Alerts {
		if !validStatus(a.Status) {
			return &PayloadError{Reason: fmt.Sprintf("alerts[%d].status %q: must be %s or %s", i, a.Status, StatusFiring, StatusResolved)}
		}
		if a.StartsAt.IsZero() {
			return &PayloadError{Reason: fmt.Sprintf("alerts[%d].startsAt is missing", i)}
		}
	}
	return nil
}

func validStatus(s string) bool { return s == StatusFiring || s == StatusResolved }
