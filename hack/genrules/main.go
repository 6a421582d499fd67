// Command genrules writes backfill's alerting rules, built in
// internal/observability/rules, to the files the deployments load:
//
//	deploy/monitoring/backfill.rules.yaml   a plain rule file (rule_files, promtool)
//	deploy/monitoring/prometheusrule.yaml   a PrometheusRule for kube-prometheus-stack
//	charts/backfill/files/backfill.rules.yaml  the same groups, for the Helm chart
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
	ruleFilePath       = "deploy/monitoring/backfill.rules.yaml"
	prometheusRulePath = "deploy/monitoring/prometheusrule.yaml"
	chartRuleFilePath  = "charts/backfill/files/backfill.rules.yaml"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genrules:", err)
		os.Exit(1)
	}
}

func run() error {
	groups := rules.Groups()
	ruleFile, err := rules.RuleFile(groups)
	if err != nil {
		return err
	}
	prometheusRule, err := rules.PrometheusRule(groups, rules.DefaultRelease)
	if err != nil {
		return err
	}
	for path, content := range map[string][]byte{
		ruleFilePath:       ruleFile,
		chartRuleFilePath:  ruleFile,
		prometheusRulePath: prometheusRule,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("creating the directory of %s: %w", path, err)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}
