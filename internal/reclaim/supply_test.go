package reclaim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// Each node is decided as the controller decides it, then summed up.
func TestSupplyOf(t *testing.T) {
	partial := func(u *Usage) *Usage { u.Partial = true; return u }
	stale := usage(2000, 8)
	stale.At = ago(10 * time.Minute)
	notFound := errors.New("listing node metrics: the server could not find the requested resource (get nodes.metrics.k8s.io)")
	type node struct {
		node  Node
		usage *Usage
	}
	cases := map[string]struct {
		nodes      []node
		usageErr   error
		source     string
		publishing bool
		reason     string
		message    []string
	}{
		"the source fails: its error, and how to give the manager usage": {
			nodes: []node{{node16(Resources{}), nil}}, usageErr: notFound, source: "metrics-api",
			reason: ReasonUsageSourceUnavailable,
			message: []string{"the metrics-api usage source fails: listing node metrics: the server could not find the requested resource (get nodes.metrics.k8s.io)",
				"install metrics-server", "--reclaim-usage-source=prometheus --prometheus-url=URL", "--reclaim=false"},
		},
		"prometheus fails: its own fix": {
			nodes: []node{{node16(Resources{}), nil}}, usageErr: errors.New("connection refused"), source: "prometheus",
			reason:  ReasonUsageSourceUnavailable,
			message: []string{"the prometheus usage source fails: connection refused", "make the Prometheus of --prometheus-url answer", "--reclaim=false"},
		},
		"the source answers with no current usage of any node": {
			nodes: []node{{node16(Resources{}), nil}, {node16(Resources{}), stale}}, source: "metrics-api",
			reason:  ReasonUsageSourceUnavailable,
			message: []string{"the metrics-api usage source has no current usage of any node (node n is frozen:", "install metrics-server"},
		},
		"usage is current but its history shorter than the window": {
			nodes: []node{{node16(Resources{}), partial(usage(2000, 8))}}, source: "metrics-api",
			reason:  ReasonReclaimWarmingUp,
			message: []string{"less than --reclaim-window (15m0s)", "wait up to 15m0s"},
		},
		"usage is current and online pods use it all": {
			nodes: []node{{node16(Resources{}), usage(15000, 60)}, {node16(Resources{}), partial(usage(15000, 60))}}, source: "metrics-api",
			reason:  ReasonNoIdleCapacity,
			message: []string{"no node has capacity to reclaim", "backfill describe node NODE"},
		},
		"a node publishes": {
			nodes: []node{{node16(Resources{}), usage(15000, 60)}, {changedAgo(time.Hour, res(4000, 16)), usage(2000, 8)}}, source: "metrics-api",
			publishing: true,
		},
		"a frozen node keeps publishing what it did": {
			nodes: []node{{node16(res(4000, 16)), nil}}, usageErr: notFound, source: "metrics-api",
			publishing: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var outcomes []nodeOutcome
			for _, n := range tc.nodes {
				outcomes = append(outcomes, nodeOutcome{node: n.node.Name, decision: Decide(n.node, n.usage, settings(), now), partial: n.usage != nil && n.usage.Partial})
			}
			got := supplyOf(outcomes, tc.usageErr, tc.source, settings(), res(14000, 50))
			if !got.Decided || got.Publishing != tc.publishing || got.Reason != tc.reason || got.Ceiling != res(14000, 50) {
				t.Errorf("supply %+v: want decided, publishing %v, reason %q and the ceiling", got, tc.publishing, tc.reason)
			}
			for _, want := range tc.message {
				if !strings.Contains(got.Message, want) {
					t.Errorf("message %q: want %q in it", got.Message, want)
				}
			}
			if tc.reason == "" && got.Message != "" {
				t.Errorf("message %q of a publishing cluster: want none", got.Message)
			}
		})
	}
}

// A change of the supply is told once; a reason keeps its first message,
// so that a source failing with new words each sync writes no job again.
func TestSetSupply(t *testing.T) {
	c := NewController(nil, nil, nil, settings(), 0, nil, clock.RealClock{}, logr.Discard())
	changes := func() int {
		n := 0
		for {
			select {
			case <-c.SupplyChanges():
				n++
			default:
				return n
			}
		}
	}
	failing := Supply{Decided: true, Reason: ReasonUsageSourceUnavailable, Message: "fails: connection refused"}
	c.setSupply(failing)
	if got := changes(); got != 1 {
		t.Errorf("the first decision: %d changes told, want 1", got)
	}
	again := failing
	again.Message = "fails: i/o timeout"
	c.setSupply(again)
	c.setSupply(failing)
	if got := changes(); got != 0 || c.Supply().Message != failing.Message {
		t.Errorf("the same reason in other words: %d changes told and message %q, want 0 and %q", got, c.Supply().Message, failing.Message)
	}
	c.setSupply(Supply{Decided: true, Publishing: true})
	c.setSupply(Supply{Decided: true, Reason: ReasonNoIdleCapacity, Message: "none idle"})
	if got := changes(); got != 1 {
		t.Errorf("two changes before the first is taken: %d told, want 1 (its reader reads the latest)", got)
	}
	if got := c.Supply(); got.Reason != ReasonNoIdleCapacity || got.Message != "none idle" {
		t.Errorf("supply %+v: want the latest reason with its own message", got)
	}
}
