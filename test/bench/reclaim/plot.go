package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// The lines of the plots: one colour per policy in the sweep's order,
// then online pods alone.
var (
	lineColors = []color.Color{
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
		color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
		color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
		color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, // purple
		color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
		color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}, // cyan
		color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}, // olive
		color.RGBA{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff}, // pink
		color.RGBA{R: 0x00, G: 0x00, B: 0x00, A: 0xff}, // black
	}
	onlineColor = color.Gray{Y: 0x60}
)

// writeDayPlot draws the cluster's CPU utilisation over one simulated day
// (day counts from 1) per policy to path (PNG).
func writeDayPlot(path string, day, nodes int, profile string, seed uint64, tallies []*tally) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Cluster CPU utilisation on simulated day %d (%d nodes, 1-minute steps, profile %s, seed %d)", day, nodes, profile, seed)
	p.X.Label.Text = "time of day (hours)"
	p.Y.Label.Text = "CPU used / allocatable (%)"
	// Above 100% is room for the legend.
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 24, 0, 135
	p.X.Tick.Marker = plot.ConstantTicks(hourTicks())
	p.Y.Tick.Marker = plot.ConstantTicks(percentTicks())
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.Padding = vg.Points(4)

	from := (day - 1) * minutesPerDay
	for i, t := range tallies {
		label := t.policy
		if t.knobs != "-" {
			label += ", " + t.knobs
		}
		if err := addLine(p, t.cpu[from:from+minutesPerDay], label, lineColors[i%len(lineColors)], nil); err != nil {
			return err
		}
	}
	dashes := []vg.Length{vg.Points(4), vg.Points(3)}
	if err := addLine(p, tallies[0].online[from:from+minutesPerDay], "online pods alone", onlineColor, dashes); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return p.Save(10*vg.Inch, 5*vg.Inch, path)
}

// addLine draws a day of per-minute shares (0-1) as percent against the
// hour.
func addLine(p *plot.Plot, shares []float64, label string, c color.Color, dashes []vg.Length) error {
	xys := make(plotter.XYs, len(shares))
	for m, v := range shares {
		xys[m] = plotter.XY{X: float64(m) / 60, Y: 100 * v}
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(1.2), dashes
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

// hourTicks label every third hour.
func hourTicks() []plot.Tick {
	var ticks []plot.Tick
	for h := 0; h <= 24; h++ {
		t := plot.Tick{Value: float64(h)}
		if h%3 == 0 {
			t.Label = fmt.Sprintf("%02d:00", h)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// percentTicks label every tenth percent.
func percentTicks() []plot.Tick {
	var ticks []plot.Tick
	for v := 0; v <= 100; v += 10 {
		ticks = append(ticks, plot.Tick{Value: float64(v), Label: fmt.Sprintf("%d", v)})
	}
	return ticks
}
