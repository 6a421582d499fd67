package framework

import (
	"context"
	"time"

	"k8s.io/client-go/rest"

	"github.com/backfill-dev/backfill/internal/manager"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// Manager is a backfill manager a suite runs in-process.
type Manager struct {
	done chan struct{}
	err  error
}

// ManagerOptions are the manager's defaults with its metrics and health
// servers off, so that no suite's manager binds a fixed port; a suite that
// scrapes the manager gives it an address of its own.
func ManagerOptions() manager.Options {
	opts := manager.DefaultOptions()
	opts.MetricsAddress, opts.HealthAddress = "0", "0"
	return opts
}

// ReclaimSettings are reclaim's production model on a clock fast enough
// for a suite: a pass a second, growth to full within a pass, any change
// worth a write, and CPU evicted at once, since suites raise online use
// for good, never in bursts. window and staleAfter are the suite's, as
// its usage source samples.
func ReclaimSettings(window, staleAfter time.Duration) reclaim.Settings {
	s := reclaim.DefaultSettings()
	s.Interval = time.Second
	s.Window, s.StaleAfter = window, staleAfter
	s.GrowthPerMinute, s.MinChange = 1000, 1
	s.CPUEvictionDelay = 0
	return s
}

// StartManager runs the manager with opts against the cluster of cfg in a
// goroutine. When the suite closes, it cancels the manager and waits until
// it has returned. opts are used as they are: validate them first if the
// suite means to.
func (s *Suite) StartManager(cfg *rest.Config, opts manager.Options) *Manager {
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{done: make(chan struct{})}
	go func() {
		m.err = manager.RunWithConfig(ctx, cfg, opts)
		close(m.done)
	}()
	s.OnStop("the manager", func() error {
		cancel()
		return m.Err()
	})
	return m
}

// Done is closed once the manager has returned.
func (m *Manager) Done() <-chan struct{} { return m.done }

// Err waits until the manager has returned, and returns its error.
func (m *Manager) Err() error {
	<-m.done
	return m.err
}
