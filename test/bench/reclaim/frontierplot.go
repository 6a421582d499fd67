package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// frontierPanels are the columns of the frontier plot: utilisation
// against each harm.
var frontierPanels = []struct {
	title, unit string
	y           metric
}{
	{"node-minutes above 85% CPU", "node-minutes", metricHot85},
	{"node-minutes above 90% CPU", "node-minutes", metricHot90},
	{"node-minutes with online P99 above 1.5x alone", "node-minutes", metricSlow15},
	{"online P99 inflation, 99th percentile of node-minutes", "P99 / P99 alone", metricLatP99},
	{"training work lost", "replica-hours", metricLost},
}

// writeFrontierPlot draws, per profile (a row) and harm (a column), every
// variant's mean over the seeds against its mean CPU utilisation, with
// the range over the seeds as bars, one line per series of the sweep.
func writeFrontierPlot(path string, f frontier, ps []profile) error {
	// Two legends side by side above the panels: the series alternate.
	legends := [2]plot.Legend{plot.NewLegend(), plot.NewLegend()}
	for i := range legends {
		legends[i].Top, legends[i].Left = true, true
		legends[i].TextStyle.Font.Size = vg.Points(10)
	}
	var rows [][]*plot.Plot
	for r, p := range ps {
		var row []*plot.Plot
		for c, panel := range frontierPanels {
			pl := plot.New()
			pl.Title.Text = fmt.Sprintf("%s profile: %s", p.name, panel.title)
			pl.X.Label.Text = "CPU used / allocatable (%), mean over seeds"
			pl.Y.Label.Text = panel.unit
			pl.X.Tick.Marker, pl.Y.Tick.Marker = plainTicks{}, plainTicks{}
			pl.Add(plotter.NewGrid())
			var l *[2]plot.Legend
			if r == 0 && c == 0 {
				l = &legends
			}
			if err := addSeries(pl, f, p.name, panel.y, l); err != nil {
				return err
			}
			row = append(row, pl)
		}
		rows = append(rows, row)
	}
	const legendHeight = 0.8 * vg.Inch
	width, height := vg.Length(len(frontierPanels))*5.5*vg.Inch, vg.Length(len(ps))*4.5*vg.Inch+legendHeight
	img := vgimg.New(width, height)
	dc := draw.New(img)
	legends[0].Draw(draw.Crop(dc, 6*vg.Millimeter, -width/2, height-legendHeight, -2*vg.Millimeter))
	legends[1].Draw(draw.Crop(dc, width/2, 0, height-legendHeight, -2*vg.Millimeter))
	tiles := draw.Tiles{Rows: len(ps), Cols: len(frontierPanels), PadX: 8 * vg.Millimeter, PadY: 8 * vg.Millimeter,
		PadTop: 4 * vg.Millimeter, PadBottom: 4 * vg.Millimeter, PadLeft: 4 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align(rows, tiles, draw.Crop(dc, 0, 0, 0, -legendHeight))
	for r := range rows {
		for c := range rows[r] {
			rows[r][c].Draw(canvases[r][c])
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(out); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// errorPoints are points with their range over the seeds, both ways.
type errorPoints struct {
	plotter.XYs
	plotter.XErrors
	plotter.YErrors
}

// plainTicks are the default ticks labelled without trailing zeros.
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label != "" {
			// Rounded first: a tick at 1.2 is 1.2000000000000002 in binary.
			ticks[i].Label = strconv.FormatFloat(math.Round(t.Value*1e6)/1e6, 'f', -1, 64)
		}
	}
	return ticks
}

// addSeries draws each series of a profile's points on y: a line through
// the means, bars for the ranges, the knob beside each point; with a
// legend, the series are named there.
func addSeries(pl *plot.Plot, f frontier, profile string, y metric, legends *[2]plot.Legend) error {
	var series []string
	for _, pt := range f {
		if pt.profile == profile && !slices.Contains(series, pt.variant.series) {
			series = append(series, pt.variant.series)
		}
	}
	for i, name := range series {
		var e errorPoints
		var labels []string
		for _, pt := range f {
			if pt.profile != profile || pt.variant.series != name {
				continue
			}
			x, yv := pt.mean.cpuMean, *y.of(&pt.mean)
			e.XYs = append(e.XYs, plotter.XY{X: x, Y: yv})
			e.XErrors = append(e.XErrors, struct{ Low, High float64 }{x - pt.lo.cpuMean, pt.hi.cpuMean - x})
			e.YErrors = append(e.YErrors, struct{ Low, High float64 }{yv - *y.of(&pt.lo), *y.of(&pt.hi) - yv})
			labels = append(labels, pt.variant.label)
		}
		c := lineColors[i%len(lineColors)]
		var legend *plot.Legend
		if legends != nil {
			legend = &legends[i%2]
		}
		if err := drawSeries(pl, e, labels, c, name, legend); err != nil {
			return err
		}
	}
	return nil
}

func drawSeries(pl *plot.Plot, e errorPoints, labels []string, c color.Color, name string, legend *plot.Legend) error {
	line, points, err := plotter.NewLinePoints(e.XYs)
	if err != nil {
		return err
	}
	line.Color, line.Width = c, vg.Points(1.2)
	points.Color, points.Shape = c, draw.CircleGlyph{}
	xbars, err := plotter.NewXErrorBars(e)
	if err != nil {
		return err
	}
	ybars, err := plotter.NewYErrorBars(e)
	if err != nil {
		return err
	}
	xbars.Color, ybars.Color = c, c
	pl.Add(line, points, xbars, ybars)
	if legend != nil {
		legend.Add(name, line, points)
	}
	text, err := plotter.NewLabels(plotter.XYLabels{XYs: e.XYs, Labels: labels})
	if err != nil {
		return err
	}
	for i := range text.TextStyle {
		text.TextStyle[i].Font.Size = vg.Points(7)
		text.TextStyle[i].Color = c
	}
	text.Offset = vg.Point{X: vg.Points(3), Y: vg.Points(3)}
	pl.Add(text)
	return nil
}
