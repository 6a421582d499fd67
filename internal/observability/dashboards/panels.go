package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// prometheusDatasource is the datasource variable, as panels and queries
// reference it.
func prometheusDatasource() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr(datasourceUID)}
}

// refID names the i-th query of a panel A, B, …, Z, AA, AB, …
func refID(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return refID(i/26-1) + refID(i%26)
}

// target builds the i-th query of a panel.
func target(i int, q Query) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Datasource(prometheusDatasource()).
		RefId(refID(i)).
		Expr(q.Expr).
		LegendFormat(q.Legend)
}

// rangeTargets are queries drawn over time.
func rangeTargets(queries []Query) []cog.Builder[variants.Dataquery] {
	targets := make([]cog.Builder[variants.Dataquery], 0, len(queries))
	for i, q := range queries {
		targets = append(targets, target(i, q).Range())
	}
	return targets
}

// grid places a panel: w of 24 columns, h rows, at x, y.
func grid(x, y, w, h uint32) dashboard.GridPos {
	return dashboard.GridPos{X: x, Y: y, W: w, H: h}
}

// statPanel shows the last value of each series of its queries.
func statPanel(id uint32, title, description string, unit Unit, pos dashboard.GridPos, queries ...Query) *stat.PanelBuilder {
	targets := make([]cog.Builder[variants.Dataquery], 0, len(queries))
	for i, q := range queries {
		targets = append(targets, target(i, q).Instant())
	}
	return stat.NewPanelBuilder().
		Id(id).
		Title(title).
		Description(description).
		Datasource(prometheusDatasource()).
		Unit(string(unit)).
		GridPos(pos).
		Targets(targets).
		GraphMode(common.BigValueGraphModeNone).
		TextMode(common.BigValueTextModeAuto).
		Orientation(common.VizOrientationAuto).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Values(false))
}

// timeSeriesPanel draws its queries over time, with a table legend of
// their last, mean and max values.
func timeSeriesPanel(id uint32, title, description string, unit Unit, pos dashboard.GridPos, queries []Query) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().
		Id(id).
		Title(title).
		Description(description).
		Datasource(prometheusDatasource()).
		Unit(string(unit)).
		GridPos(pos).
		Targets(rangeTargets(queries)).
		Legend(common.NewVizLegendOptionsBuilder().
			ShowLegend(true).
			DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementBottom).
			Calcs([]string{"lastNotNull", "mean", "max"})).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderDescending))
}

// tablePanel shows columns side by side, one row per value of key: each
// column an instant query in table format, merged on key, renamed to the
// column's name and given its unit.
func tablePanel(id uint32, title, description string, pos dashboard.GridPos, key string, columns []Column) *table.PanelBuilder {
	targets := make([]cog.Builder[variants.Dataquery], 0, len(columns))
	rename := map[string]string{}
	order := map[string]int{key: 0}
	for i, c := range columns {
		targets = append(targets, target(i, Query{Expr: c.Expr, Legend: c.Name}).
			Instant().
			Format(prometheus.PromQueryFormatTable))
		// Grafana names the value column of query X "Value #X" when it merges.
		rename["Value #"+refID(i)] = c.Name
		order[c.Name] = i + 1
	}
	panel := table.NewPanelBuilder().
		Id(id).
		Title(title).
		Description(description).
		Datasource(prometheusDatasource()).
		Unit(string(UnitCount)).
		GridPos(pos).
		Targets(targets).
		WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}}).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
			"excludeByName": map[string]bool{"Time": true},
			"renameByName":  rename,
			"indexByName":   order,
		}}).
		SortBy([]cog.Builder[common.TableSortByFieldState]{common.NewTableSortByFieldStateBuilder().DisplayName(key)})
	for _, c := range columns {
		panel.OverrideByName(c.Name, []dashboard.DynamicConfigValue{{Id: "unit", Value: string(c.Unit)}})
	}
	return panel
}
