package gpusim

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsPath is where the simulator serves its metrics, as dcgm-exporter does.
const MetricsPath = "/metrics"

// NewServer returns an HTTP server for addr (use a 127.0.0.1 address) that
// serves the simulated GPUs of the cluster l lists at MetricsPath. The
// metrics live on a registry of their own, never the global one, so nothing
// else a process registers leaks into the dcgm-exporter job. The caller
// starts the server (ListenAndServe or Serve) and shuts it down.
func NewServer(addr string, l Lister) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           Handler(l),
		ReadHeaderTimeout: 5 * time.Second,
	}
}

// Handler serves the simulated GPUs of the cluster l lists at MetricsPath,
// and at "/" a line saying what this is.
func Handler(l Lister) http.Handler {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(l))

	mux := http.NewServeMux()
	mux.Handle(MetricsPath, promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintf(w, "backfill gpusim: a SIMULATED dcgm-exporter for the local cluster; metrics at %s\n", MetricsPath)
	})
	return mux
}
