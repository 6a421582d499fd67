package framework

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/backfill-dev/backfill/internal/manager"
)

// Manager is a backfill manager a suite runs in-process.
type Manager struct {
	done chan struct{}
	err  error
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
