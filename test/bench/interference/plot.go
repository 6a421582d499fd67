package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/backfill-dev/backfill/test/bench/calibration"
)

// colorOf keeps a protection's colour the same in every panel.
func colorOf(protection string) color.Color {
	switch protection {
	case calibration.ProtectionAgent:
		return color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	case calibration.ProtectionWeights:
		return color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	case calibration.ProtectionCores:
		return color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}
	}
	return color.Gray{Y: 0x60}
}

var dashed = []vg.Length{vg.Points(4), vg.Points(3)}

// writePlot draws a row per level to path (PNG): each condition's P99
// ratio with its 95% interval beside the A/A noise floor and the target,
// and the burst's 1 s P99 in its median round.
func writePlot(path string, a *analysis) error {
	var panels [][]*plot.Plot
	for _, lr := range a.levels {
		left, err := ratioPanel(lr)
		if err != nil {
			return err
		}
		row := []*plot.Plot{left}
		if hasBursts(lr) {
			right, err := burstPanel(lr)
			if err != nil {
				return err
			}
			row = append(row, right)
		}
		panels = append(panels, row)
	}
	cols := 0
	for _, row := range panels {
		cols = max(cols, len(row))
	}
	// A level without bursts leaves its burst tile empty.
	for i := range panels {
		for len(panels[i]) < cols {
			panels[i] = append(panels[i], nil)
		}
	}
	img := vgimg.New(vg.Length(8*cols)*vg.Inch, vg.Length(5*len(panels))*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(panels), Cols: cols, PadX: vg.Inch / 4, PadY: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align(panels, tiles, dc)
	for i, row := range panels {
		for j, p := range row {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// ratioPanel puts each condition's P99 ratio (median, 95% interval) on
// a log axis: steady conditions, then bursts (from 5 s after the start).
func ratioPanel(lr levelResult) (*plot.Plot, error) {
	p := newPanel(fmt.Sprintf("online at %s of the node: P99 / online alone, median and 95%% interval over rounds", lr.lvl), "", "P99 ratio (log scale)")
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, ratioTicks{}
	var names []string
	for _, c := range lr.conds {
		if c.cond.key == keyAlone || c.cond.key == keyBurstAlone {
			continue
		}
		r := c.p99
		if c.cond.burst {
			r = c.afterBurst
		}
		x := float64(len(names))
		names = append(names, shortName(c.cond))
		if math.IsNaN(r.Median) {
			continue
		}
		pts := plotter.XYs{{X: x, Y: r.Median}}
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{pts, plotter.YErrors{{Low: r.Median - r.Lo, High: r.Hi - r.Median}}})
		if err != nil {
			return nil, err
		}
		bars.Color, bars.Width = colorOf(c.cond.protection), vg.Points(2)
		dot, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		dot.Color = colorOf(c.cond.protection)
		p.Add(bars, dot)
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop
	target := targetLowP99
	if lr.lvl.target >= heavyLevel {
		target = targetHighP99
	}
	if err := addLine(p, []point{{-0.5, target}, {float64(len(names)) - 0.5, target}}, fmt.Sprintf("target %.2f×", target), color.Black, dashed); err != nil {
		return nil, err
	}
	return p, addLine(p, []point{{-0.5, 1}, {float64(len(names)) - 0.5, 1}}, "", color.Gray{Y: 0xa0}, nil)
}

func hasBursts(lr levelResult) bool {
	for _, c := range lr.conds {
		if c.cond.burst {
			return true
		}
	}
	return false
}

// burstPanel draws the bursts' P99 over 1 s windows in their median round.
func burstPanel(lr levelResult) (*plot.Plot, error) {
	p := newPanel(fmt.Sprintf("online at %s: a burst to %.0f requests/s, P99 over 1 s windows (median round)", lr.lvl, lr.lvl.burstRate),
		"seconds from the burst's start", "P99 ms (log scale)")
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, ratioTicks{}
	for _, c := range lr.conds {
		if !c.cond.burst || c.cond.key == "burst-"+calibration.KeyAloneAgain {
			continue
		}
		if err := addLine(p, c.p99Series, c.cond.name, colorOf(c.cond.protection), nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func shortName(c condition) string {
	name := c.key
	if c.burst {
		name += " (from 5 s)"
	}
	return name
}

func newPanel(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.Padding = vg.Points(4)
	return p
}

// addLine draws points; an empty label leaves the line out of the legend.
func addLine(p *plot.Plot, pts []point, label string, c color.Color, dashes []vg.Length) error {
	if len(pts) == 0 {
		return nil
	}
	xys := make(plotter.XYs, len(pts))
	for i, pt := range pts {
		xys[i] = plotter.XY{X: pt.t, Y: pt.v}
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("drawing %q: %w", label, err)
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(1.2), dashes
	p.Add(l)
	if label != "" {
		p.Legend.Add(label, l)
	}
	return nil
}

// ratioTicks label 1, 1.5, 2, 3 and 5 times the powers of ten: ratios
// and latencies rarely span a whole decade's labels.
type ratioTicks struct{}

func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	if lo <= 0 || hi <= 0 {
		return nil
	}
	for decade := math.Pow(10, math.Floor(math.Log10(lo))); decade <= hi; decade *= 10 {
		for _, m := range []float64{1, 1.5, 2, 3, 5} {
			if v := m * decade; v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 3, 64)})
			}
		}
	}
	return ticks
}
