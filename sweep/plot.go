package sweep

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Panel sizes: PNGs are rendered at PlotDPI, so a panel is
// PanelWidth·PlotDPI/72 × PanelHeight·PlotDPI/72 pixels (576 × 384), and
// the legend is a column LegendWidth wide at the right of the figure.
const (
	PanelWidth  = 6 * vg.Inch
	PanelHeight = 4 * vg.Inch
	LegendWidth = 2 * vg.Inch
	PlotDPI     = 96
)

// PlotOptions tune WritePlot.
type PlotOptions struct {
	// ShareY gives every panel the same y range (comparisons across
	// datasets); otherwise each panel fits its own data.
	ShareY bool
}

// PlotLayout is the grid of panels WritePlot draws for a summary: a panel
// of accuracy per dataset, then a panel of balanced and minority accuracy
// per imbalanced dataset, left to right in at most three columns (one
// dataset: one panel), the legend in a column of its own at the right.
func PlotLayout(sel []Selected) (cols, rows int) {
	n := max(1, len(panels(sel)))
	cols = min(3, n)
	if n > 3 {
		cols = min(3, int(math.Ceil(math.Sqrt(float64(n)))))
	}
	return cols, (n + cols - 1) / cols
}

// PlotSize is the figure's size for a summary: the panels and the legend.
func PlotSize(sel []Selected) (width, height vg.Length) {
	cols, rows := PlotLayout(sel)
	return PanelWidth*vg.Length(cols) + LegendWidth, PanelHeight * vg.Length(rows)
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
// medians over seeds and a bar from their min to max at each ε (methods
// side by side, so that overlapping ones stay apart), and the non-private
// references as dashed lines; per imbalanced dataset, balanced (solid)
// and minority-class (dashed) accuracy against ε; one legend, in its own
// column, covering no data.
func WritePlot(w io.Writer, format string, sel []Selected, opt PlotOptions) error {
	cols, _ := PlotLayout(sel)
	width, height := PlotSize(sel)
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
	panelArea := draw.Crop(dc, 0, -LegendWidth, 0, 0)
	_, rows := PlotLayout(sel)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3, PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	st := newStyle(sel)
	legend := plot.NewLegend()
	inLegend := map[string]bool{}
	var plots []*plot.Plot
	for _, pn := range panels(sel) {
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
		plots = append(plots, p)
	}
	if opt.ShareY && len(plots) > 0 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range plots {
			lo, hi = math.Min(lo, p.Y.Min), math.Max(hi, p.Y.Max)
		}
		for _, p := range plots {
			p.Y.Min, p.Y.Max = lo, hi
		}
	}
	for k, p := range plots {
		accuracyTicks(p)
		p.Draw(tiles.At(panelArea, k%cols, k/cols))
	}
	lc := draw.Crop(dc, width-LegendWidth, 0, vg.Millimeter*3, -vg.Millimeter*3)
	legend.Top, legend.Left = true, true
	legend.Padding = vg.Millimeter
	legend.Draw(lc)
	_, err := canvas.WriteTo(w)
	return err
}

// accuracyTicks puts 5 to 10 labelled y ticks at round steps over the
// panel's range (gonum's default gave three).
func accuracyTicks(p *plot.Plot) {
	lo, hi := p.Y.Min, p.Y.Max
	if !(hi > lo) {
		lo, hi = lo-0.05, hi+0.05
	}
	step := 0.5
	for _, s := range []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5} {
		if (hi-lo)/s <= 9 {
			step = s
			break
		}
	}
	first, last := math.Floor(lo/step), math.Ceil(hi/step)
	p.Y.Min, p.Y.Max = first*step, last*step
	decimals := 0
	if s := strconv.FormatFloat(step, 'f', -1, 64); strings.Contains(s, ".") {
		decimals = len(s) - strings.Index(s, ".") - 1
	}
	var ticks []plot.Tick
	for k := first; k <= last; k++ {
		ticks = append(ticks, plot.Tick{Value: k * step, Label: strconv.FormatFloat(k*step, 'f', decimals, 64)})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
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
	p.X.Min, p.X.Max = eps[0]/1.35, eps[len(eps)-1]*1.35
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
	p, methods, lines, refs := newPanel(sel, dataset, "median over seeds, bars min–max", "test accuracy")
	for j, m := range methods {
		i := st.index[m]
		ls := lines[m]
		// Methods side by side at each ε (a log axis: a factor), so that
		// their bars do not overlap.
		dodge := math.Pow(1.06, float64(j)-float64(len(methods)-1)/2)
		mid := make(plotter.XYs, len(ls))
		col := colorOf(i)
		for k, s := range ls {
			x := s.Epsilon * dodge
			mid[k] = plotter.XY{X: x, Y: s.TestMedian}
			bar, err := plotter.NewLine(plotter.XYs{{X: x, Y: s.TestMin}, {X: x, Y: s.TestMax}})
			if err != nil {
				return nil, err
			}
			bar.Color, bar.Width = col, vg.Points(1.5)
			p.Add(bar)
		}
		line, points, err := plotter.NewLinePoints(mid)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = col, col
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
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
	p, methods, lines, _ := newPanel(sel, dataset, "balanced (solid), minority (dashed), medians", "test accuracy")
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
