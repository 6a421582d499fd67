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
)

// colorOf keeps a scenario's colour the same in every panel: grey for
// online alone, orange for the same weight, blue for BestEffort, green
// for the node agent.
func colorOf(sc scenario) color.Color {
	switch {
	case sc.offline == nil:
		return color.Gray{Y: 0x60}
	case sc.agent:
		return color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	case sc.offline.qos == "burstable":
		return color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	default:
		return color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	}
}

var (
	dashed = []vg.Length{vg.Points(4), vg.Points(3)}
	dotted = []vg.Length{vg.Points(1), vg.Points(2)}
)

// writePlot draws four panels to path (PNG): online P99 over 1 s windows
// and offline CPU, at steady load and during a burst.
func writePlot(path string, res *results) error {
	bound := targetP99Ratio * ms(res.baseline().lat.p99)
	var steady, bursts []result
	for _, r := range res.runs {
		if r.sc.burst {
			bursts = append(bursts, r)
		} else {
			steady = append(steady, r)
		}
	}
	const steadyX, burstX = "seconds from the measured window's start", "seconds from the burst's start"
	var panels [][]*plot.Plot
	for _, row := range []func() (*plot.Plot, *plot.Plot, error){
		func() (*plot.Plot, *plot.Plot, error) {
			a, err := latencyPanel("steady load: online P99 over 1 s windows", steadyX, steady, bound)
			if err != nil {
				return nil, nil, err
			}
			b, err := latencyPanel("burst: online P99 over 1 s windows", burstX, bursts, bound)
			return a, b, err
		},
		func() (*plot.Plot, *plot.Plot, error) {
			a, err := cpuPanel("steady load: offline CPU use (dotted: the agent's ceiling)", steadyX, steady)
			if err != nil {
				return nil, nil, err
			}
			b, err := cpuPanel("burst: offline CPU use (dotted: the agent's ceiling)", burstX, bursts)
			return a, b, err
		},
	} {
		left, right, err := row()
		if err != nil {
			return err
		}
		panels = append(panels, []*plot.Plot{left, right})
	}
	img := vgimg.New(16*vg.Inch, 10*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 2, PadX: vg.Inch / 4, PadY: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align(panels, tiles, dc)
	for i, row := range panels {
		for j, p := range row {
			p.Draw(canvases[i][j])
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

func latencyPanel(title, xLabel string, runs []result, bound float64) (*plot.Plot, error) {
	p := newPanel(title, xLabel, "P99 (ms, log scale)")
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, latencyTicks{}
	lo, hi := 0.0, 0.0
	for _, r := range runs {
		if len(r.p99) > 0 {
			lo, hi = min(lo, r.p99[0].t), max(hi, r.p99[len(r.p99)-1].t)
		}
		if err := addLine(p, r.p99, r.sc.name, colorOf(r.sc), nil); err != nil {
			return nil, err
		}
	}
	label := fmt.Sprintf("%.2f× the baseline's P99", targetP99Ratio)
	return p, addLine(p, []point{{lo, bound}, {hi, bound}}, label, color.Black, dashed)
}

func cpuPanel(title, xLabel string, runs []result) (*plot.Plot, error) {
	p := newPanel(title, xLabel, "cores")
	p.Y.Min = 0
	for _, r := range runs {
		if r.sc.offline == nil {
			continue
		}
		if err := addLine(p, r.offline, r.sc.name, colorOf(r.sc), nil); err != nil {
			return nil, err
		}
		if err := addLine(p, r.ceiling, "", colorOf(r.sc), dotted); err != nil {
			return nil, err
		}
	}
	return p, nil
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

// latencyTicks label 1, 2 and 5 times the powers of ten: a log axis of
// latencies rarely spans a whole decade's labels.
type latencyTicks struct{}

func (latencyTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	if lo <= 0 || hi <= 0 {
		return nil
	}
	for decade := math.Pow(10, math.Floor(math.Log10(lo))); decade <= hi; decade *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := m * decade; v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ticks
}
