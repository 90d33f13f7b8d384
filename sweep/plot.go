package sweep

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Panel sizes: PNGs are rendered at PlotDPI, so a panel is
// PanelWidth·PlotDPI/72 × PanelHeight·PlotDPI/72 pixels (576 × 384).
const (
	PanelWidth  = 6 * vg.Inch
	PanelHeight = 4 * vg.Inch
	PlotDPI     = 96
)

// PlotLayout is the grid of panels WritePlot draws for a summary: one
// column per dataset; one row of accuracy, and a second of balanced and
// minority accuracy when some training file is imbalanced.
func PlotLayout(sel []Selected) (cols, rows int) {
	ds, imb := datasets(sel)
	rows = 1
	if len(imb) > 0 {
		rows = 2
	}
	return max(1, len(ds)), rows
}

func datasets(sel []Selected) (all []string, imbalanced map[string]bool) {
	seen := map[string]bool{}
	imbalanced = map[string]bool{}
	for _, s := range sel {
		if !seen[s.Dataset] {
			seen[s.Dataset] = true
			all = append(all, s.Dataset)
		}
		if s.Imbalanced {
			imbalanced[s.Dataset] = true
		}
	}
	sort.Strings(all)
	return all, imbalanced
}

// WritePlot draws the summary as png or svg: per dataset, test accuracy
// against ε (log axis) with one line per private method through the
// medians over seeds and a band from their min to max, and the non-private
// references as dashed lines; per imbalanced dataset, balanced (solid)
// and minority-class (dashed) accuracy against ε.
func WritePlot(w io.Writer, format string, sel []Selected) error {
	cols, rows := PlotLayout(sel)
	width, height := PanelWidth*vg.Length(cols), PanelHeight*vg.Length(rows)
	var canvas interface {
		vg.CanvasWriterTo
	}
	switch format {
	case "png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(PlotDPI), vgimg.UseBackgroundColor(color.White))}
	case "svg":
		canvas = vgsvg.New(width, height)
	default:
		return fmt.Errorf("plot format %q: expected png or svg", format)
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	names, imb := datasets(sel)
	for c, name := range names {
		p, err := accuracyPanel(sel, name)
		if err != nil {
			return err
		}
		p.Draw(tiles.At(dc, c, 0))
		if imb[name] {
			p, err := imbalancePanel(sel, name)
			if err != nil {
				return err
			}
			p.Draw(tiles.At(dc, c, 1))
		}
	}
	_, err := canvas.WriteTo(w)
	return err
}

// epsAxis makes the x axis logarithmic with ticks at the sweep's ε.
func epsAxis(p *plot.Plot, eps []float64) {
	p.X.Scale = plot.LogScale{}
	p.X.Label.Text = "ε"
	if len(eps) == 0 {
		eps = []float64{0.1, 1, 10}
	}
	sort.Float64s(eps)
	var ticks []plot.Tick
	for _, e := range eps {
		ticks = append(ticks, plot.Tick{Value: e, Label: strconv.FormatFloat(e, 'g', 4, 64)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = eps[0]/1.25, eps[len(eps)-1]*1.25
}

// byMethod groups a dataset's private summary lines by method, ε ascending,
// and collects the references.
func byMethod(sel []Selected, dataset string) (methods []string, lines map[string][]Selected, refs []Selected, eps []float64) {
	lines = map[string][]Selected{}
	seen := map[float64]bool{}
	for _, s := range sel {
		if s.Dataset != dataset || math.IsNaN(s.TestMedian) {
			continue
		}
		if math.IsInf(s.Epsilon, 1) {
			refs = append(refs, s)
			continue
		}
		if lines[s.Method] == nil {
			methods = append(methods, s.Method)
		}
		lines[s.Method] = append(lines[s.Method], s)
		if !seen[s.Epsilon] {
			seen[s.Epsilon] = true
			eps = append(eps, s.Epsilon)
		}
	}
	sort.Strings(methods)
	for _, m := range methods {
		sort.Slice(lines[m], func(i, j int) bool { return lines[m][i].Epsilon < lines[m][j].Epsilon })
	}
	return methods, lines, refs, eps
}

func accuracyPanel(sel []Selected, dataset string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = dataset
	p.Y.Label.Text = "test accuracy (median; band: min–max over seeds)"
	methods, lines, refs, eps := byMethod(sel, dataset)
	epsAxis(p, eps)
	p.Legend.Top, p.Legend.Left = false, false
	for i, m := range methods {
		ls := lines[m]
		mid, band := make(plotter.XYs, len(ls)), make(plotter.XYs, 0, 2*len(ls))
		for k, s := range ls {
			mid[k] = plotter.XY{X: s.Epsilon, Y: s.TestMedian}
			band = append(band, plotter.XY{X: s.Epsilon, Y: s.TestMin})
		}
		for k := len(ls) - 1; k >= 0; k-- {
			band = append(band, plotter.XY{X: ls[k].Epsilon, Y: ls[k].TestMax})
		}
		col := plotutil.Color(i)
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return nil, err
		}
		r, g, b, _ := col.RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x38}
		poly.LineStyle.Width = 0
		line, points, err := plotter.NewLinePoints(mid)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = col, col
		points.Shape = plotutil.Shape(i)
		p.Add(poly, line, points)
		p.Legend.Add(m, line, points)
	}
	for i, r := range refs {
		lo, hi := p.X.Min, p.X.Max
		l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: r.TestMedian}, {X: hi, Y: r.TestMedian}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 0x60}
		l.Dashes = plotutil.Dashes(1 + i%4)
		p.Add(l)
		p.Legend.Add(r.Method+" (non-private)", l)
	}
	return p, nil
}

func imbalancePanel(sel []Selected, dataset string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = dataset + ": balanced (solid) and minority-class (dashed) accuracy"
	p.Y.Label.Text = "test accuracy (median over seeds)"
	methods, lines, _, eps := byMethod(sel, dataset)
	epsAxis(p, eps)
	p.Legend.Top, p.Legend.Left = false, false
	for i, m := range methods {
		var bal, minor plotter.XYs
		for _, s := range lines[m] {
			if s.Balanced != nil {
				bal = append(bal, plotter.XY{X: s.Epsilon, Y: *s.Balanced})
			}
			if s.Minority != nil {
				minor = append(minor, plotter.XY{X: s.Epsilon, Y: *s.Minority})
			}
		}
		col := plotutil.Color(i)
		for k, xys := range []plotter.XYs{bal, minor} {
			if len(xys) == 0 {
				continue
			}
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, err
			}
			l.Color, pts.Color = col, col
			pts.Shape = plotutil.Shape(i)
			if k == 1 {
				l.Dashes = plotutil.Dashes(2)
			} else {
				p.Legend.Add(m, l, pts)
			}
			p.Add(l, pts)
		}
	}
	return p, nil
}
