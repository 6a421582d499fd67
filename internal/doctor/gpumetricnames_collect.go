package doctor

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The reads of the gpu-metric-names check, noted in Snapshot.Forbidden
// when refused.
const (
	readPrometheusRules = "prometheusrules.monitoring.coreos.com in every namespace"
	readDashboards      = "configmaps in every namespace"
)

// GrafanaDashboardLabel marks the ConfigMaps Grafana's dashboard sidecar
// loads (its default label, whatever the value), as kube-prometheus-stack
// runs it.
const GrafanaDashboardLabel = "grafana_dashboard"

// prometheusRuleListGVK is the Prometheus Operator's PrometheusRule list.
var prometheusRuleListGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRuleList"}

// GPUQueriesView is what doctor read of the queries that may name GPU
// metrics: the Prometheus Operator's rules and Grafana's dashboards.
type GPUQueriesView struct {
	// RulesServed: the apiserver serves monitoring.coreos.com/v1
	// PrometheusRules (the Prometheus Operator's CRD is installed).
	RulesServed bool
	// Rules are the PrometheusRules of every namespace.
	Rules []unstructured.Unstructured
	// Dashboards are the ConfigMaps of every namespace labelled
	// GrafanaDashboardLabel.
	Dashboards []corev1.ConfigMap
}

// readGPUQueries reads every PrometheusRule and every dashboard
// ConfigMap. Without the CRD there are no rules to read; a refused list
// is noted in s.Forbidden, whatever the scope: rules and dashboards live
// in the monitoring namespaces, not the jobs'.
func (s *Snapshot) readGPUQueries(ctx context.Context, c client.Reader) error {
	rules := &unstructured.UnstructuredList{}
	rules.SetGroupVersionKind(prometheusRuleListGVK)
	err := c.List(ctx, rules)
	switch {
	case meta.IsNoMatchError(err):
	case apierrors.IsForbidden(err):
		s.GPUQueries.RulesServed = true
		s.Forbidden[readPrometheusRules] = true
	case err != nil:
		return fmt.Errorf("listing PrometheusRules: %w", err)
	default:
		s.GPUQueries.RulesServed, s.GPUQueries.Rules = true, rules.Items
	}
	var dashboards corev1.ConfigMapList
	err = c.List(ctx, &dashboards, client.HasLabels{GrafanaDashboardLabel})
	switch {
	case apierrors.IsForbidden(err):
		s.Forbidden[readDashboards] = true
	case err != nil:
		return fmt.Errorf("listing the ConfigMaps labelled %s: %w", GrafanaDashboardLabel, err)
	default:
		s.GPUQueries.Dashboards = dashboards.Items
	}
	return nil
}
