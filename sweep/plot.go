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

// PlotLayout is the grid WritePlot draws for a summary: a panel of
// accuracy per dataset, a panel of balanced and minority accuracy per
// imbalanced dataset, and a legend, flowing left to right in at most three
// columns.
func PlotLayout(sel []Selected) (cols, rows int) {
	n := len(panels(sel)) + 1
	cols = min(3, int(math.Ceil(math.Sqrt(float64(n)))))
	return cols, (n + cols - 1) / cols
}

type panel struct {
	dataset   string
	imbalance bool
}

func panels(sel []Selected) []panel {
	names, imb := datasets(sel)
	var out []panel
	for _, d := range names {
		out = append(out, panel{dataset: d})
	}
	for _, d := range names {
		if imb[d] {
			out = append(out, panel{dataset: d, imbalance: true})
		}
	}
	return out
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

// palette is Tableau's ten colours: distinct, and readable in print.
var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff}, color.RGBA{0xbc, 0xbd, 0x22, 0xff},
	color.RGBA{0x17, 0xbe, 0xcf, 0xff},
}

func colorOf(i int) color.Color { return palette[i%len(palette)] }

// style gives each method the same colour and marker in every panel, and
// each reference a dash pattern.
type style struct {
	index map[string]int
}

func newStyle(sel []Selected) style {
	st := style{index: map[string]int{}}
	var methods []string
	for _, s := range sel {
		if _, ok := st.index[s.Method]; !ok {
			st.index[s.Method] = 0
			methods = append(methods, s.Method)
		}
	}
	sort.Strings(methods)
	for i, m := range methods {
		st.index[m] = i
	}
	return st
}

// WritePlot draws the summary as png or svg: per dataset, test accuracy
// against ε (log axis) with one line per private method through the
// medians over seeds and a band from their min to max, and the non-private
// references as dashed lines; per imbalanced dataset, balanced (solid)
// and minority-class (dashed) accuracy against ε; and one legend.
func WritePlot(w io.Writer, format string, sel []Selected) error {
	cols, rows := PlotLayout(sel)
	width, height := PanelWidth*vg.Length(cols), PanelHeight*vg.Length(rows)
	var canvas vg.CanvasWriterTo
	switch format {
	case "png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(PlotDPI), vgimg.UseBackgroundColor(color.White))}
	case "svg":
		canvas = vgsvg.New(width, height)
	default:
		return fmt.Errorf("plot format %q: expected png or svg", format)
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3, PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	st := newStyle(sel)
	legend := plot.NewLegend()
	inLegend := map[string]bool{}
	ps := panels(sel)
	for k, pn := range ps {
		var p *plot.Plot
		var err error
		if pn.imbalance {
			p, err = imbalancePanel(sel, pn.dataset, st, &legend, inLegend)
		} else {
			p, err = accuracyPanel(sel, pn.dataset, st, &legend, inLegend)
		}
		if err != nil {
			return err
		}
		p.Draw(tiles.At(dc, k%cols, k/cols))
	}
	k := len(ps)
	lc := tiles.At(dc, k%cols, k/cols)
	legend.Top, legend.Left = true, true
	legend.Padding = vg.Millimeter
	legend.Draw(lc)
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

// newPanel starts a dataset's panel: titles, the ε axis, and its lines.
func newPanel(sel []Selected, dataset, title, ylabel string) (*plot.Plot, []string, map[string][]Selected, []Selected) {
	p := plot.New()
	p.Title.Text = dataset + ": " + title
	p.Y.Label.Text = ylabel
	methods, lines, refs, eps := byMethod(sel, dataset)
	epsAxis(p, eps)
	return p, methods, lines, refs
}

func accuracyPanel(sel []Selected, dataset string, st style, legend *plot.Legend, inLegend map[string]bool) (*plot.Plot, error) {
	p, methods, lines, refs := newPanel(sel, dataset, "test accuracy", "median over seeds; band: min–max")
	for _, m := range methods {
		i := st.index[m]
		ls := lines[m]
		mid, band := make(plotter.XYs, len(ls)), make(plotter.XYs, 0, 2*len(ls))
		for k, s := range ls {
			mid[k] = plotter.XY{X: s.Epsilon, Y: s.TestMedian}
			band = append(band, plotter.XY{X: s.Epsilon, Y: s.TestMin})
		}
		for k := len(ls) - 1; k >= 0; k-- {
			band = append(band, plotter.XY{X: ls[k].Epsilon, Y: ls[k].TestMax})
		}
		col := colorOf(i)
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
		if !inLegend[m] {
			inLegend[m] = true
			legend.Add(m, line, points)
		}
	}
	for _, r := range refs {
		lo, hi := p.X.Min, p.X.Max
		l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: r.TestMedian}, {X: hi, Y: r.TestMedian}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 0x50}
		l.Dashes = plotutil.Dashes(1 + st.index[r.Method]%4)
		p.Add(l)
		if name := r.Method + " (non-private)"; !inLegend[name] {
			inLegend[name] = true
			legend.Add(name, l)
		}
	}
	return p, nil
}

func imbalancePanel(sel []Selected, dataset string, st style, legend *plot.Legend, inLegend map[string]bool) (*plot.Plot, error) {
	p, methods, lines, _ := newPanel(sel, dataset, "balanced (solid), minority (dashed)", "test accuracy, median over seeds")
	for _, m := range methods {
		i := st.index[m]
		var bal, minor plotter.XYs
		for _, s := range lines[m] {
			if s.Balanced != nil {
				bal = append(bal, plotter.XY{X: s.Epsilon, Y: *s.Balanced})
			}
			if s.Minority != nil {
				minor = append(minor, plotter.XY{X: s.Epsilon, Y: *s.Minority})
			}
		}
		col := colorOf(i)
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
			} else if !inLegend[m] {
				inLegend[m] = true
				legend.Add(m, l, pts)
			}
			p.Add(l, pts)
		}
	}
	return p, nil
}
