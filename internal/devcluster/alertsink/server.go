package alertsink

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// Path is where Alertmanager posts its notifications.
const Path = "/alerts"

// HealthPath answers 200 while the sink serves.
const HealthPath = "/-/healthy"

// maxPayload bounds one notification: the local cluster's groups are small.
const maxPayload = 4 << 20

// NewServer returns the sink listening on addr, appending what
// Alertmanager posts to file (created if missing).
func NewServer(addr, file string) *http.Server {
	s := &sink{file: file, now: time.Now}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+Path, s.record)
	mux.HandleFunc("GET "+HealthPath, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	return &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
}

type sink struct {
	file string
	now  func() time.Time
	mu   sync.Mutex // one line at a time, whole
}

// record appends the notification as one line; a body that is not
// Alertmanager's JSON is refused with 400 and not recorded.
func (s *sink) record(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPayload+1))
	if err != nil || len(body) > maxPayload {
		http.Error(w, "reading the notification failed or it is over 4 MiB", http.StatusBadRequest)
		return
	}
	var n Notification
	if err := json.Unmarshal(body, &n); err != nil {
		http.Error(w, fmt.Sprintf("not an Alertmanager webhook notification: %v", err), http.StatusBadRequest)
		return
	}
	n.ReceivedAt = s.now().UTC()
	if err := s.append(n); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *sink) append(n Notification) error {
	line, err := json.Marshal(n)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(s.file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("recording the notification: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		_ = f.Close()
		return fmt.Errorf("recording the notification: %w", err)
	}
	return f.Close()
}
