package alertrelay

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// maxBodyBytes bounds a webhook body. Alertmanager's notifications are
// far smaller, even with hundreds of alerts.
const maxBodyBytes = 1 << 20

// robotNames are the routes the relay knows, each POST /<name>.
var robotNames = map[string]string{"dingtalk": "DingTalk", "wecom": "WeCom"}

// NewHandler serves POST /dingtalk and POST /wecom for the robots given
// (a route without its robot answers 404), GET /healthz and GET /metrics,
// and registers the relay's metrics on registry.
func NewHandler(robots []Robot, registry *prometheus.Registry, log logr.Logger) (http.Handler, error) {
	m := newRelayMetrics()
	if err := registry.Register(m.notifications); err != nil {
		return nil, fmt.Errorf("registering the alert relay's metrics: %w", err)
	}
	mux := http.NewServeMux()
	configured := map[string]Robot{}
	for _, r := range robots {
		configured[r.Name()] = r
		// Show the series from the start, so that a rate() sees the first.
		m.notifications.WithLabelValues(r.Name(), ResultDelivered)
	}
	for name, display := range robotNames {
		r, ok := configured[name]
		if !ok {
			mux.HandleFunc("POST /"+name, func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, fmt.Sprintf("no %s robot is configured: start the relay with --%s-url-file", display, name), http.StatusNotFound)
			})
			continue
		}
		mux.Handle("POST /"+name, &relayHandler{robot: r, metrics: m, log: log.WithValues("robot", name)})
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	return mux, nil
}

// relayHandler takes Alertmanager's notifications for one robot.
type relayHandler struct {
	robot   Robot
	metrics *relayMetrics
	log     logr.Logger
}

func (h *relayHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n, err := DecodeNotification(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		h.count(ResultInvalid)
		status := http.StatusBadRequest
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			status = http.StatusRequestEntityTooLarge
			err = fmt.Errorf("the body is over %d bytes: not an Alertmanager notification", maxBodyBytes)
		}
		h.log.Info("Refusing a notification", "reason", err.Error())
		http.Error(w, err.Error(), status)
		return
	}
	log := h.log.WithValues("groupKey", n.GroupKey, "status", n.Status, "alerts", len(n.Alerts))
	err = h.robot.Deliver(r.Context(), n)
	result, status := outcome(err)
	h.count(result)
	if err != nil {
		// Alertmanager retries on 5xx and logs the body.
		log.Error(err, "Notification not delivered", "result", result)
		http.Error(w, err.Error(), status)
		return
	}
	log.V(1).Info("Notification delivered")
	fmt.Fprintln(w, "delivered")
}

func (h *relayHandler) count(result string) {
	h.metrics.notifications.WithLabelValues(h.robot.Name(), result).Inc()
}

// outcome is the result label and the HTTP status of a delivery.
func outcome(err error) (string, int) {
	var refused *RefusedError
	var config *ConfigError
	switch {
	case err == nil:
		return ResultDelivered, http.StatusOK
	case errors.As(err, &refused):
		return ResultRefused, http.StatusBadGateway
	case errors.As(err, &config):
		return ResultMisconfigured, http.StatusInternalServerError
	default:
		return ResultUnreachable, http.StatusBadGateway
	}
}

// ConfigError is a robot's URL or secret file the relay cannot use.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }

func (e *ConfigError) Unwrap() error { return e.Err }
