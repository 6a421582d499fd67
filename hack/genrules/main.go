// Command genrules writes backfill's alerting rules, built in
// internal/observability/rules, to the files the deployments load:
//
//	deploy/monitoring/backfill.rules.yaml   a plain rule file (rule_files, promtool)
//	deploy/monitoring/prometheusrule.yaml   a PrometheusRule for kube-prometheus-stack
//	deploy/monitoring/*-essential.*         the same two with the essential profile's alerts
//	charts/backfill/files/backfill.rules.yaml  the same groups, for the Helm chart
//	charts/backfill/files/backfill.profiles.yaml  the alerts of each profile, which the chart keeps
//
// Run it from the repository's root: `make generate` does.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/backfill-dev/backfill/internal/observability/rules"
)

// Where the files go, relative to the repository's root.
const (
	ruleFilePath                = "deploy/monitoring/backfill.rules.yaml"
	prometheusRulePath          = "deploy/monitoring/prometheusrule.yaml"
	essentialRuleFilePath       = "deploy/monitoring/backfill-essential.rules.yaml"
	essentialPrometheusRulePath = "deploy/monitoring/prometheusrule-essential.yaml"
	chartRuleFilePath           = "charts/backfill/files/backfill.rules.yaml"
	chartProfileFilePath        = "charts/backfill/files/backfill.profiles.yaml"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genrules:", err)
		os.Exit(1)
	}
}

func run() error {
	all := rules.Groups()
	essential := rules.InProfile(all, rules.ProfileEssential)
	files := map[string]func() ([]byte, error){
		ruleFilePath:                func() ([]byte, error) { return rules.RuleFile(all) },
		chartRuleFilePath:           func() ([]byte, error) { return rules.RuleFile(all) },
		prometheusRulePath:          func() ([]byte, error) { return rules.PrometheusRule(all, rules.DefaultRelease) },
		essentialRuleFilePath:       func() ([]byte, error) { return rules.RuleFile(essential) },
		essentialPrometheusRulePath: func() ([]byte, error) { return rules.PrometheusRule(essential, rules.DefaultRelease) },
		chartProfileFilePath:        func() ([]byte, error) { return rules.ProfileFile(all) },
	}
	for path, render := range files {
		content, err := render()
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("creating the directory of %s: %w", path, err)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}
