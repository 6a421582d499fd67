package devcluster

import (
	"fmt"
	"io"
	"net"
	"text/tabwriter"
	"time"
)

// Health is what `dev status` found of a component.
type Health struct {
	Component
	Alive, Serving bool
}

// Check looks at each recorded component: is its process alive, and does
// its address accept connections.
func (s *State) Check() []Health {
	var out []Health
	for _, c := range s.Components {
		h := Health{Component: c, Alive: processAlive(c.PID)}
		if conn, err := net.DialTimeout("tcp", c.Address, time.Second); err == nil {
			h.Serving = true
			_ = conn.Close()
		}
		out = append(out, h)
	}
	return out
}

// orDash is s, or "-" for a cluster that recorded none.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Print writes the state as `dev status` shows it; it reports whether every
// component is healthy.
func (s *State) Print(w io.Writer) bool {
	phase := "starting"
	if s.Ready {
		phase = "ready"
	}
	if !s.Running() {
		phase = "stopped (dev up is not running)"
	}
	fmt.Fprintf(w, "Local cluster: %s, up since %s (pid %d)\n", phase, s.StartedAt.Format(time.RFC3339), s.PID)
	fmt.Fprintf(w, "  export KUBECONFIG=%s\n", s.Kubeconfig)
	fmt.Fprintf(w, "  Prometheus: %s\n", s.Prometheus)
	fmt.Fprintf(w, "  Alertmanager: %s (backfill dev alerts)\n\n", orDash(s.Alertmanager))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tPID\tADDRESS\tSTATE")
	healthy := s.Running()
	for _, h := range s.Check() {
		state := "healthy"
		switch {
		case !h.Alive:
			state, healthy = "exited", false
		case !h.Serving:
			state, healthy = "not serving", false
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", h.Name, h.PID, h.Address, state)
	}
	_ = tw.Flush()
	return healthy
}
