package rules

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/promqltest"
	promrules "github.com/prometheus/prometheus/rules"
)

// evalInterval is how often the harness evaluates the rules, as promtool's
// default evaluation_interval.
const evalInterval = time.Minute

// inputInterval is the spacing of the loaded samples: Prometheus 3's
// left-open ranges need several samples inside every rate window.
const inputInterval = "15s"

// firing is one firing alert, as promtool's unit tests compare them.
type firing struct {
	Labels      map[string]string
	Annotations map[string]string
}

// firingAt loads series (promqltest's load syntax, one per line, spaced
// inputInterval apart), evaluates the generated rule file every
// evalInterval from time 0 to at, as Prometheus would, and returns the
// alerts firing at at, by alert name.
func firingAt(t *testing.T, series []string, at time.Duration) map[string][]firing {
	t.Helper()
	file := filepath.Join(t.TempDir(), "backfill.rules.yaml")
	content, err := RuleFile(Groups())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, content, 0o600); err != nil {
		t.Fatal(err)
	}
	load := "load " + inputInterval + "\n  " + strings.Join(series, "\n  ") + "\n"
	suite, err := promqltest.NewLazyLoader(load, promqltest.LazyLoaderOpts{EnableAtModifier: true, EnableNegativeOffset: true})
	if err != nil {
		t.Fatalf("Loading the series: %v", err)
	}
	t.Cleanup(func() {
		if err := suite.Close(); err != nil {
			t.Errorf("Closing the test storage: %v", err)
		}
	})
	manager := promrules.NewManager(&promrules.ManagerOptions{
		QueryFunc:    promrules.EngineQueryFunc(suite.QueryEngine(), suite.Storage()),
		AppendableV2: suite.Storage(),
		Context:      context.Background(),
		NotifyFunc:   func(context.Context, string, ...*promrules.Alert) {},
		Logger:       promslog.NewNopLogger(),
	})
	groups, errs := manager.LoadGroups(evalInterval, labels.EmptyLabels(), "", nil, false, file)
	if len(errs) > 0 {
		t.Fatalf("Loading the generated rule file: %v", errs)
	}
	for _, g := range groups {
		for _, r := range g.Rules() {
			if a, ok := r.(*promrules.AlertingRule); ok {
				a.SetRestored(true) // as promtool: a fresh rule group has no state to restore
			}
		}
	}
	start := time.Unix(0, 0).UTC()
	for ts := start; !ts.After(start.Add(at)); ts = ts.Add(evalInterval) {
		suite.WithSamplesTill(ts, func(err error) {
			if err != nil {
				t.Fatalf("Loading samples till %v: %v", ts.Sub(start), err)
			}
			for _, g := range groups {
				g.Eval(suite.Context(), ts)
				for _, r := range g.Rules() {
					if err := r.LastError(); err != nil {
						t.Fatalf("Evaluating %s at %v: %v", r.Name(), ts.Sub(start), err)
					}
				}
			}
		})
	}
	return firingAlerts(groups)
}

func firingAlerts(groups map[string]*promrules.Group) map[string][]firing {
	got := map[string][]firing{}
	for _, g := range groups {
		for _, r := range g.Rules() {
			a, ok := r.(*promrules.AlertingRule)
			if !ok {
				continue
			}
			for _, alert := range a.ActiveAlerts() {
				if alert.State == promrules.StateFiring {
					got[a.Name()] = append(got[a.Name()], firing{Labels: alert.Labels.Map(), Annotations: alert.Annotations.Map()})
				}
			}
		}
	}
	for _, alerts := range got {
		sort.Slice(alerts, func(i, j int) bool {
			return labels.FromMap(alerts[i].Labels).String() < labels.FromMap(alerts[j].Labels).String()
		})
	}
	return got
}
