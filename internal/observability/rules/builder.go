// Package rules holds backfill's Prometheus alerting rules, built in Go so
// that they share their PromQL with the dashboards (package expr), and
// renders them as a plain rule file and as a PrometheusRule.
package rules

import (
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// Severity is the value of an alert's severity label.
type Severity string

// Severities, as kube-prometheus-stack's alerts use them.
const (
	SeverityCritical Severity = "critical"
	SeverityWarning  Severity = "warning"
	SeverityInfo     Severity = "info"
)

// Profile is the smallest alert profile that loads an alert. Installs
// start with ProfileEssential and add the rest, ProfileFull, once the
// essential alerts are trusted: a new install that receives every alert
// from its first day learns to ignore them.
type Profile string

// Profiles, as the chart's value alerting.profile names them.
const (
	// ProfileEssential alerts are loaded by every install: node and GPU
	// health, failed jobs, the node agent, the usage source and online
	// services harmed.
	ProfileEssential Profile = "essential"
	// ProfileFull alerts are loaded only by the full profile: tuning and
	// efficiency, which a new install has yet to learn what is normal for.
	ProfileFull Profile = "full"
)

// Includes says whether an install of profile p loads an alert of profile
// q: full loads every alert, essential only the essential ones.
func (p Profile) Includes(q Profile) bool {
	return p == ProfileFull || q == ProfileEssential
}

// RunbookBase is where the runbooks live: one section per alert in
// docs/observability.md, anchored by the alert's name in lower case.
const RunbookBase = "https://github.com/backfill-dev/backfill/blob/main/docs/observability.md#"

// Alert is one alerting rule, as written in Go.
type Alert struct {
	// Name is CamelCase with the prefix Backfill or BackfillTFJob.
	Name string
	// Expr is the PromQL whose series are the alert's instances.
	Expr string
	// For is how long a series must persist before the alert fires.
	For time.Duration
	// Severity is critical (act now), warning (act today) or info.
	Severity Severity
	// Profile is the smallest alert profile that loads the alert.
	Profile Profile
	// Summary is one line; Description says what is wrong and where to
	// look. Both are Go templates over $labels and $value.
	Summary, Description string
}

// Group is a named list of alerts evaluated together.
type Group struct {
	Name   string
	Alerts []Alert
}

// RunbookURL is the link to the alert's section of docs/observability.md.
func (a Alert) RunbookURL() string {
	return RunbookBase + strings.ToLower(a.Name)
}

// rule is an alert as a Prometheus rule file spells it.
type rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type ruleGroup struct {
	Name  string `json:"name"`
	Rules []rule `json:"rules"`
}

func (a Alert) rule() rule {
	r := rule{
		Alert:  a.Name,
		Expr:   a.Expr,
		Labels: map[string]string{"severity": string(a.Severity)},
		Annotations: map[string]string{
			"summary":     a.Summary,
			"description": a.Description,
			"runbook_url": a.RunbookURL(),
		},
	}
	if a.For > 0 {
		r.For = model.Duration(a.For).String()
	}
	return r
}

// InProfile are the groups with only the alerts an install of profile p
// loads; a group left with none is dropped, as a rule file may not hold an
// empty group.
func InProfile(groups []Group, p Profile) []Group {
	var out []Group
	for _, g := range groups {
		kept := Group{Name: g.Name}
		for _, a := range g.Alerts {
			if p.Includes(a.Profile) {
				kept.Alerts = append(kept.Alerts, a)
			}
		}
		if len(kept.Alerts) > 0 {
			out = append(out, kept)
		}
	}
	return out
}

// AlertNames are the names of the groups' alerts, in order.
func AlertNames(groups []Group) []string {
	var names []string
	for _, g := range groups {
		for _, a := range g.Alerts {
			names = append(names, a.Name)
		}
	}
	return names
}

func (g Group) ruleGroup() ruleGroup {
	rg := ruleGroup{Name: g.Name}
	for _, a := range g.Alerts {
		rg.Rules = append(rg.Rules, a.rule())
	}
	return rg
}
