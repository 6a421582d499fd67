package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/guptarohit/asciigraph"
	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/spf13/cobra"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/devcluster"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/observability/dashboards"
)

// topOptions are the flags of `backfill top`.
type topOptions struct {
	prometheusURL string
	interval      time.Duration
	rateInterval  time.Duration
	once          bool
	chart         bool
	stateDir      string
	// output is "" for the glance table within tableWidth columns, or
	// "wide" for every column of the cockpit's table.
	output string
}

func newTopCommand() *cobra.Command {
	opts := topOptions{interval: 5 * time.Second, rateInterval: 2 * time.Minute, chart: true, stateDir: devcluster.DefaultOptions().StateDir}
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Show the co-location cockpit's numbers and per-node watermarks from Prometheus",
		Long: `Show what the Grafana co-location cockpit shows, in the terminal: online and
offline CPU used, GPU utilisation of training pods, GPUs free, the
cluster's CPU and memory utilisation, the per-node watermark table (the
columns to scan for trouble, within 120 columns, among them the GPUs
training pods hold on loan; -o wide for all), and a
chart of the last hour of online and offline CPU use. The numbers come from
Prometheus, by the same queries as the dashboard, and refresh every
--interval until Ctrl-C.

Without --prometheus-url, top uses the Prometheus of the local cluster that
` + "`backfill dev up`" + ` runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(opts.output, outputTable, outputWide); err != nil {
				return err
			}
			if err := opts.validate(); err != nil {
				return usageError{err}
			}
			if opts.prometheusURL == "" {
				u, err := devPrometheusURL(opts.stateDir)
				if err != nil {
					return usageError{err}
				}
				opts.prometheusURL = u
			}
			client, err := api.NewClient(api.Config{Address: opts.prometheusURL})
			if err != nil {
				return usageError{fmt.Errorf("--prometheus-url %q: %w", opts.prometheusURL, err)}
			}
			t := &top{api: promv1.NewAPI(client), opts: opts, warnings: cmd.ErrOrStderr()}
			return t.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.prometheusURL, "prometheus-url", "", "Prometheus to query, e.g. http://prometheus-operated.monitoring:9090 (default: the Prometheus of the local cluster that 'backfill dev up' started).")
	f.DurationVar(&opts.interval, "interval", opts.interval, "Time between two refreshes.")
	f.DurationVar(&opts.rateInterval, "rate-interval", opts.rateInterval, "Window of rate() over CPU usage, as Grafana's $__rate_interval: at least four scrape intervals.")
	f.BoolVar(&opts.once, "once", false, "Print one frame and exit, for scripts.")
	f.BoolVar(&opts.chart, "chart", opts.chart, "Draw the last hour of online and offline CPU use below the table; --chart=false leaves it out.")
	f.StringVarP(&opts.output, "output", "o", "", "Output format: wide for every column of the node table (default: the columns that fit 120 columns).")
	addStateDirFlag(cmd, &opts.stateDir)
	return cmd
}

// validate checks the flags before anything is queried.
func (o topOptions) validate() error {
	if o.interval <= 0 {
		return fmt.Errorf("--interval %v: must be positive, e.g. 5s", o.interval)
	}
	if o.rateInterval < time.Second {
		return fmt.Errorf("--rate-interval %v: must be at least 1s, e.g. 2m", o.rateInterval)
	}
	if o.prometheusURL != "" {
		u, err := url.Parse(o.prometheusURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--prometheus-url %q: want an http(s) URL such as http://127.0.0.1:9090", o.prometheusURL)
		}
	}
	return nil
}

// devPrometheusURL is the Prometheus of the local cluster running from
// stateDir.
func devPrometheusURL(stateDir string) (string, error) {
	s, err := devcluster.ReadState(stateDir)
	if err != nil || !s.Running() || s.Prometheus == "" {
		return "", errors.New("no --prometheus-url given and no local cluster (`backfill dev up`) runs: pass --prometheus-url http://<prometheus>:9090")
	}
	return s.Prometheus, nil
}

// top draws frames from Prometheus.
type top struct {
	api  promv1.API
	opts topOptions
	// warnings gets Prometheus's warnings about the queries (a partial
	// answer, say), each once; nil drops them.
	warnings io.Writer
	warned   map[string]bool
}

// run prints frames every interval until ctx ends, or one with --once.
func (t *top) run(ctx context.Context, out io.Writer) error {
	if t.opts.once {
		frame, err := t.frame(ctx, time.Now())
		if err != nil {
			return err
		}
		_, err = io.WriteString(out, frame)
		return err
	}
	tick := time.NewTicker(t.opts.interval)
	defer tick.Stop()
	clear := isTerminal(out)
	for {
		frame, err := t.frame(ctx, time.Now())
		if err != nil {
			frame = fmt.Sprintf("%s  %v\n", time.Now().Format("15:04:05"), err)
		}
		if clear {
			frame = "\x1b[H\x1b[2J" + frame
		}
		if _, err := io.WriteString(out, frame); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// isTerminal reports whether out is a terminal, where frames replace each
// other; elsewhere (a file, a pipe) they follow each other.
func isTerminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// figuresPerLine is how many of the cockpit's figures top prints on one
// line: four fit in about 100 columns.
const figuresPerLine = 4

// frame is one screen: the cockpit's figures, the watermark table, then
// the chart of CPU use unless --chart=false.
func (t *top) frame(ctx context.Context, at time.Time) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  Prometheus %s\n", at.Format("15:04:05"), t.opts.prometheusURL)
	var figures []string
	for _, f := range dashboards.CockpitFigures() {
		samples, err := t.query(ctx, f.Query.Expr, at)
		if err != nil {
			return "", fmt.Errorf("%s: %w", f.Title, err)
		}
		value := "-"
		if len(samples) > 0 {
			value = formatValue(float64(samples[0].Value), f.Unit)
		}
		figures = append(figures, fmt.Sprintf("%s: %s", f.Title, value))
	}
	for len(figures) > 0 {
		n := min(figuresPerLine, len(figures))
		b.WriteString(strings.Join(figures[:n], "   ") + "\n")
		figures = figures[n:]
	}
	b.WriteString("\n")
	table, err := t.watermarks(ctx, at)
	if err != nil {
		return "", err
	}
	b.WriteString(table)
	if t.opts.chart {
		chart, err := t.cpuChart(ctx, at)
		if err != nil {
			return "", err
		}
		b.WriteString("\n" + chart)
	}
	return b.String(), nil
}

// tableWidth is how many columns the node table takes at most without
// -o wide: a glance fits a terminal beside another.
const tableWidth = 120

// minNodeWidth is the fewest columns a node name is elided to, however
// wide the numbers are.
const minNodeWidth = 12

// topColumn is how top shows one of the cockpit table's columns: its
// header, and whether the glance (the table without -o wide) has it.
type topColumn struct {
	header string
	glance bool
}

// topColumns are top's headers for dashboards.WatermarkColumns, by name.
// The glance is what an operator scans for trouble: the CPU each tier
// uses, the batch CPU published beside what offline pods hold of it, the
// offline pods, the GPUs held and free, and a frozen reclaim. A column
// not named here shows under -o wide with its name in capitals.
var topColumns = map[string]topColumn{
	"Pods online":       {header: "PODS ON"},
	"Pods offline":      {header: "PODS OFF", glance: true},
	"CPU allocatable":   {header: "CPU ALLOC"},
	"CPU req online":    {header: "CPU REQ ON"},
	"CPU req offline":   {header: "CPU REQ OFF"},
	"CPU used online":   {header: "CPU ON", glance: true},
	"CPU used offline":  {header: "CPU OFF", glance: true},
	"CPU reclaimable":   {header: "BATCH CPU", glance: true},
	"CPU offline holds": {header: "BATCH HELD", glance: true},
	"Mem allocatable":   {header: "MEM ALLOC"},
	"Mem req online":    {header: "MEM REQ ON"},
	"Mem req offline":   {header: "MEM REQ OFF"},
	"Mem used online":   {header: "MEM ON"},
	"Mem used offline":  {header: "MEM OFF"},
	"Mem reclaimable":   {header: "BATCH MEM"},
	"Mem offline holds": {header: "BATCH MEM HELD"},
	"Guaranteed":        {header: "GUARANTEED"},
	"Burstable":         {header: "BURSTABLE"},
	"BestEffort":        {header: "BESTEFFORT"},
	"GPUs allocated":    {header: "GPU ALLOC", glance: true},
	"GPUs free":         {header: "GPU FREE", glance: true},
	"GPUs lent":         {header: "GPU LENT", glance: true},
	"Reclaim frozen":    {header: "FROZEN", glance: true},
}

// lentColumn is a column of top's own beside the cockpit's: the GPUs
// training pods hold on each node, which are GPU loans (internal/gpuloan)
// but for the jobs Kueue manages.
func lentColumn() dashboards.Column {
	return dashboards.Column{Name: "GPUs lent", Unit: dashboards.UnitCount,
		Expr: fmt.Sprintf(`sum by (node) (%s{tier=%q,resource="nvidia_com_gpu"})`, metrics.NameNodeRequests, colocation.TierOffline)}
}

// TopColumns are the columns of `top -o wide`: the cockpit table's, in
// the dashboard's order, with lentColumn after the GPUs free (at the end
// without them) unless the dashboard has a column of its name.
func TopColumns() []dashboards.Column {
	cockpit := dashboards.WatermarkColumns()
	lent := lentColumn()
	if slices.ContainsFunc(cockpit, func(c dashboards.Column) bool { return c.Name == lent.Name }) {
		return cockpit
	}
	out := make([]dashboards.Column, 0, len(cockpit)+1)
	for _, c := range cockpit {
		out = append(out, c)
		if c.Name == "GPUs free" {
			out = append(out, lent)
		}
	}
	if len(out) == len(cockpit) {
		out = append(out, lent)
	}
	return out
}

// tableColumns are the table's columns top shows (TopColumns) and their
// headers: all of them with wide, else the glance.
func tableColumns(wide bool) ([]dashboards.Column, []string) {
	var columns []dashboards.Column
	var headers []string
	for _, c := range TopColumns() {
		tc, ok := topColumns[c.Name]
		if !ok {
			tc = topColumn{header: strings.ToUpper(c.Name)}
		}
		if wide || tc.glance {
			columns = append(columns, c)
			headers = append(headers, tc.header)
		}
	}
	return columns, headers
}

// watermarks is the per-node table, one row per node any column has.
func (t *top) watermarks(ctx context.Context, at time.Time) (string, error) {
	wide := t.opts.output == outputWide
	columns, headers := tableColumns(wide)
	cells := map[string][]string{}
	for i, c := range columns {
		samples, err := t.query(ctx, c.Expr, at)
		if err != nil {
			return "", fmt.Errorf("%s: %w", c.Name, err)
		}
		for _, s := range samples {
			node := string(s.Metric["node"])
			if cells[node] == nil {
				cells[node] = make([]string, len(columns))
			}
			cells[node][i] = formatValue(float64(s.Value), c.Unit)
		}
	}
	nodes := make([]string, 0, len(cells))
	for n := range cells {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	rows := make([][]string, len(nodes))
	for i, n := range nodes {
		for _, v := range cells[n] {
			if v == "" {
				v = "-"
			}
			rows[i] = append(rows[i], v)
		}
	}
	return renderTable(headers, nodes, rows, wide)
}

// columnGap is the space between two columns of the node table.
const columnGap = 2

// renderTable writes the node table: node names padded to one width read
// left, numbers align right. Unless wide, names longer than what
// tableWidth leaves them are elided in the middle, where names of one
// cluster tend to agree (a prefix of pool, a suffix of domain).
func renderTable(headers, nodes []string, rows [][]string, wide bool) (string, error) {
	width := len("NODE")
	for _, n := range nodes {
		width = max(width, utf8.RuneCountInString(n))
	}
	if !wide {
		// Each column takes its widest cell and the gap before it.
		rest := columnGap
		for i, h := range headers {
			w := utf8.RuneCountInString(h)
			for _, row := range rows {
				w = max(w, utf8.RuneCountInString(row[i]))
			}
			rest += w + columnGap
		}
		width = min(width, max(tableWidth-rest, minNodeWidth))
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, columnGap, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, fmt.Sprintf("%-*s", width, "NODE")+"\t"+strings.Join(headers, "\t")+"\t")
	for i, n := range nodes {
		fmt.Fprintln(w, fmt.Sprintf("%-*s", width, elide(n, width))+"\t"+strings.Join(rows[i], "\t")+"\t")
	}
	if err := w.Flush(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// elide shortens s to width runes by an ellipsis in its middle, keeping
// more of its start than of its end.
func elide(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	tail := (width - 1) / 2
	head := width - 1 - tail
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// substitute sets a dashboard query's variables as for the whole cluster.
func (t *top) substitute(expr string) string {
	return dashboards.Substitute(expr, map[string]string{
		dashboards.VarNamespace: dashboards.AllValue,
		dashboards.VarTFJob:     dashboards.AllValue,
		"__rate_interval":       model.Duration(t.opts.rateInterval).String(),
	})
}

// query runs a dashboard query at a time, with the dashboard's variables
// set as for the whole cluster.
func (t *top) query(ctx context.Context, expr string, at time.Time) (model.Vector, error) {
	qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	value, warnings, _, err := t.api.Query(qctx, t.substitute(expr), at)
	if err != nil {
		return nil, fmt.Errorf("querying Prometheus: %w", err)
	}
	t.warn(warnings)
	vector, ok := value.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("query returned a %s, want a vector", value.Type())
	}
	return vector, nil
}

// warn writes the warnings Prometheus has not given before.
func (t *top) warn(warnings promv1.Warnings) {
	for _, w := range warnings {
		if t.warnings == nil || t.warned[w] {
			continue
		}
		if t.warned == nil {
			t.warned = map[string]bool{}
		}
		t.warned[w] = true
		fmt.Fprintf(t.warnings, "warning: Prometheus: %s\n", w)
	}
}

// The chart of CPU use: an hour at one point a minute, 61 points, which
// with the axis labels keeps it within about 75 columns.
const (
	chartSpan   = time.Hour
	chartStep   = time.Minute
	chartHeight = 10
)

// chartChars tell the series of dashboards.CPUUsedByTier apart without
// colours, which a pipe or a file would show as escape codes: online in
// box-drawing lines, offline in dots. The caption names each by its
// horizontal mark.
var chartChars = []asciigraph.CharSet{asciigraph.DefaultCharSet, asciigraph.CreateCharSet("•")}

// cpuChart draws the last hour of online and offline CPU use, by the
// cockpit's CPU by tier queries run over the range.
func (t *top) cpuChart(ctx context.Context, at time.Time) (string, error) {
	queries := dashboards.CPUUsedByTier()
	start := at.Add(-chartSpan)
	points := int(chartSpan/chartStep) + 1
	series := make([][]float64, len(queries))
	var legend []string
	empty := true
	for i, q := range queries {
		values, err := t.queryRange(ctx, q.Expr, promv1.Range{Start: start, End: at, Step: chartStep}, points)
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", q.Legend, err)
		}
		for _, v := range values {
			empty = empty && math.IsNaN(v)
		}
		series[i] = values
		legend = append(legend, chartChars[i].Horizontal+" "+q.Legend)
	}
	caption := "CPU used (cores), last hour: " + strings.Join(legend, "   ")
	if empty {
		return caption + ": no data\n", nil
	}
	minutes := chartSpan.Minutes()
	plot := asciigraph.PlotMany(series,
		asciigraph.Height(chartHeight),
		asciigraph.LowerBound(0),
		asciigraph.Precision(2),
		asciigraph.SeriesChars(chartChars...),
		asciigraph.XAxisRange(-minutes, 0),
		asciigraph.XAxisTickCount(5),
		asciigraph.XAxisValueFormatter(func(v float64) string {
			if v == 0 {
				return "now"
			}
			return fmt.Sprintf("%.0fm", v)
		}),
		asciigraph.Caption(caption))
	return plot + "\n", nil
}

// queryRange runs a dashboard query over a range and returns its one
// series as points values at r.Step from r.Start, NaN where Prometheus has
// none (no sample in the rate window, or before the series began).
func (t *top) queryRange(ctx context.Context, expr string, r promv1.Range, points int) ([]float64, error) {
	qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	value, warnings, _, err := t.api.QueryRange(qctx, t.substitute(expr), r)
	if err != nil {
		return nil, fmt.Errorf("querying Prometheus: %w", err)
	}
	t.warn(warnings)
	matrix, ok := value.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("range query returned a %s, want a matrix", value.Type())
	}
	out := make([]float64, points)
	for i := range out {
		out[i] = math.NaN()
	}
	// The queries sum over the cluster: one series, or none without data.
	for _, s := range matrix {
		for _, p := range s.Values {
			i := int(math.Round(float64(p.Timestamp.Time().Sub(r.Start)) / float64(r.Step)))
			// An infinite value (a division by zero) would stretch the
			// axis to nothing: left blank like a missing one.
			if i >= 0 && i < points && !math.IsInf(float64(p.Value), 0) {
				out[i] = float64(p.Value)
			}
		}
	}
	return out, nil
}

// formatValue writes a value in its panel's unit.
func formatValue(v float64, unit dashboards.Unit) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	switch unit {
	case dashboards.UnitCores:
		return fmt.Sprintf("%.2f", v)
	case dashboards.UnitPercent:
		return fmt.Sprintf("%.0f%%", v)
	case dashboards.UnitBytes:
		return formatBytes(v)
	case dashboards.UnitSeconds:
		return (time.Duration(v) * time.Second).String()
	}
	return fmt.Sprintf("%.0f", v)
}

// formatBytes writes bytes in binary units, as kubectl writes memory.
func formatBytes(v float64) string {
	units := []string{"B", "Ki", "Mi", "Gi", "Ti"}
	i := 0
	for math.Abs(v) >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f%s", v, units[i])
	}
	return fmt.Sprintf("%.1f%s", v, units[i])
}
