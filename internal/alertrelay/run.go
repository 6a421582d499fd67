package alertrelay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Run serves the relay on opts.Listen until ctx ends. The listener is
// given so that tests can pick a free port; nil listens on opts.Listen.
func Run(ctx context.Context, opts Options, l net.Listener, log logr.Logger) error {
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	client := &http.Client{Timeout: opts.Timeout}
	robots := opts.Robots(client)
	h, err := NewHandler(robots, registry, log)
	if err != nil {
		return err
	}
	if l == nil {
		if l, err = net.Listen("tcp", opts.Listen); err != nil {
			return fmt.Errorf("listening on %s: %w", opts.Listen, err)
		}
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	var names []string
	for _, r := range robots {
		names = append(names, r.Name())
	}
	log.Info("Relaying Alertmanager notifications", "address", l.Addr().String(), "robots", names)
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
