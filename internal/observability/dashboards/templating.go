package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// datasourceVariable lets the viewer pick the Prometheus every panel
// queries; kube-prometheus-stack's own dashboards name it the same.
func datasourceVariable() *dashboard.DatasourceVariableBuilder {
	return dashboard.NewDatasourceVariableBuilder(VarDatasource).
		Label("Data source").
		Type("prometheus")
}

// labelValuesVariable offers the values of a label of a metric, refreshed
// whenever the time range changes, so that new TFJobs appear.
func labelValuesVariable(name, label, selector string) *dashboard.QueryVariableBuilder {
	query := "label_values(" + selector + ", " + label + ")"
	return dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Datasource(prometheusDatasource()).
		Query(dashboard.StringOrMap{String: cog.ToPtr(query)}).
		Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc)
}

// multiVariable is labelValuesVariable with several values or All, which
// queries match with =~.
func multiVariable(name, label, selector string) *dashboard.QueryVariableBuilder {
	all := "$__all"
	return labelValuesVariable(name, label, selector).
		Multi(true).
		IncludeAll(true).
		AllValue(AllValue).
		Current(dashboard.VariableOption{
			Text:  dashboard.StringOrArrayOfString{ArrayOfString: []string{"All"}},
			Value: dashboard.StringOrArrayOfString{ArrayOfString: []string{all}},
		})
}
