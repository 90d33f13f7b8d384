package onnxexport

import (
	"github.com/dpfeat/dpfeat/models"
)

// resizeLayout is resize for the manifest's layout: NHWC images are
// transposed to NCHW and back.
func (g *builder) resizeLayout(in models.Input, x string) string {
	if in.Layout != "NHWC" {
		return g.resize(in, x)
	}
	x = g.op("Transpose", []string{x}, intsAttr("perm", 0, 3, 1, 2))
	return g.op("Transpose", []string{g.resize(in, x)}, intsAttr("perm", 0, 2, 3, 1))
}

// resize adds the manifest's resize (and centre crop) of images x
// [N, C, H, W] float32 of any H and W, as encode's Preprocessor computes
// it, and returns the [N, C, Height, Width] result.
//
// It is written with the operators of opset 13, not with Resize: an
// antialiased Resize needs opset 18, and a fused model keeps its
// encoder's opset (PyTorch exports 17 by default). The resampling is
// separable and linear, so each axis is one matrix, computed in the graph
// from the image's size with encode's formulas in float64 (the output
// pixel x has centre (x + ½)·in/out; the filter — triangle, Keys cubic
// with a = −½, or nearest — is stretched by in/out when downscaling; the
// weights are normalised to sum to 1 and rounded to float32), for the
// rows and columns the crop keeps only. Horizontal then vertical, as
// encode: x·Wxᵀ, then Wy·(x·Wxᵀ). The sums run in another order than
// encode's (over every input pixel, the zero weights included), so a
// pixel may differ from extract's in its last float32 bits.
func (g *builder) resize(in models.Input, x string) string {
	shape := g.op("Shape", []string{x})
	h := g.op("Cast", []string{g.op("Gather", []string{shape, g.scalarInt("axis", 2)})}, intAttr("to", elemDouble))
	w := g.op("Cast", []string{g.op("Gather", []string{shape, g.scalarInt("axis", 3)})}, intAttr("to", elemDouble))
	rh, rw := g.double("height", float64(in.Height)), g.double("width", float64(in.Width))
	fromY, fromX := g.double("zero", 0), g.double("zero", 0)
	if in.Crop == "center" {
		// torchvision's Resize(int): the shorter side becomes s, the
		// longer int(s·long/short); then the central Height×Width, its
		// offset round((resized − crop)/2) with halves to even (ONNX
		// Round, Python's round).
		s := g.double("resize_size", float64(in.ResizeSize))
		short := g.op("Min", []string{h, w})
		rh = g.op("Floor", []string{g.op("Div", []string{g.op("Mul", []string{s, h}), short})})
		rw = g.op("Floor", []string{g.op("Div", []string{g.op("Mul", []string{s, w}), short})})
		half := g.double("half", 0.5)
		fromY = g.op("Round", []string{g.op("Mul", []string{g.op("Sub", []string{rh, g.double("crop_height", float64(in.Height))}), half})})
		fromX = g.op("Round", []string{g.op("Mul", []string{g.op("Sub", []string{rw, g.double("crop_width", float64(in.Width))}), half})})
	}
	wx := g.op("Transpose", []string{g.resampling(in.Resize, w, rw, fromX, in.Width)}, intsAttr("perm", 1, 0))
	wy := g.resampling(in.Resize, h, rh, fromY, in.Height)
	x = g.op("MatMul", []string{wy, g.op("MatMul", []string{x, wx})})
	if in.RoundAfterResize {
		// encode: math.Round(min(max(v, 0), 255)), halves away from zero;
		// floor(v + ½) in float64 is the same for v ≥ 0.
		x = g.op("Clip", []string{x, g.floats32("zero", nil, []float32{0}), g.floats32("max_pixel", nil, []float32{255})})
		x = g.op("Cast", []string{x}, intAttr("to", elemDouble))
		x = g.op("Floor", []string{g.op("Add", []string{x, g.double("half", 0.5)})})
		x = g.op("Cast", []string{x}, intAttr("to", elemFloat))
	}
	return x
}

// resampling is the [n, in] float32 matrix of the resize of in pixels to
// out (float64 scalars), for the outputs [from, from+n): encode's
// coefficients.
func (g *builder) resampling(kind, in, out, from string, n int) string {
	scale := g.op("Div", []string{in, out})
	one, half := g.double("one", 1), g.double("half", 0.5)
	// Output positions [n, 1] and input positions [in].
	xs := g.op("Add", []string{from, g.op("Range", []string{g.double("zero", 0), g.double("n", float64(n)), one})})
	xs = g.op("Unsqueeze", []string{xs, g.ints("axes", 1)})
	is := g.op("Range", []string{g.double("zero", 0), in, one})
	if kind == "nearest" {
		// PIL NEAREST, torch nearest-exact: min(floor((x + ½)·scale), in − 1).
		idx := g.op("Floor", []string{g.op("Mul", []string{g.op("Add", []string{xs, half}), scale})})
		idx = g.op("Min", []string{idx, g.op("Sub", []string{in, one})})
		return g.op("Cast", []string{g.op("Equal", []string{is, idx})}, intAttr("to", elemFloat))
	}
	fscale := g.op("Max", []string{scale, one})
	center := g.op("Mul", []string{g.op("Add", []string{xs, half}), scale})
	// (i − centre + ½)/fscale, as encode orders it.
	arg := g.op("Div", []string{g.op("Add", []string{g.op("Sub", []string{is, center}), half}), fscale})
	a := g.op("Abs", []string{arg})
	var wt string
	if kind == "bicubic" {
		// Keys cubic, a = −½: ((a+2)x − (a+3))x² + 1 below 1,
		// (((x − 5)x + 8)x − 4)·a below 2, else 0.
		inner := g.op("Sub", []string{g.op("Mul", []string{g.double("a2", 1.5), a}), g.double("a3", 2.5)})
		inner = g.op("Add", []string{g.op("Mul", []string{g.op("Mul", []string{inner, a}), a}), one})
		outer := g.op("Sub", []string{g.op("Mul", []string{g.op("Add", []string{g.op("Mul", []string{g.op("Sub", []string{a, g.double("five", 5)}), a}), g.double("eight", 8)}), a}), g.double("four", 4)})
		outer = g.op("Mul", []string{outer, g.double("a", -0.5)})
		zero := g.double("zero", 0)
		wt = g.op("Where", []string{g.op("Less", []string{a, one}), inner,
			g.op("Where", []string{g.op("Less", []string{a, g.double("two", 2)}), outer, zero})})
	} else {
		wt = g.op("Relu", []string{g.op("Sub", []string{one, a})})
	}
	sum := g.reduce("ReduceSum", wt, true, 1)
	return g.op("Cast", []string{g.op("Div", []string{wt, sum})}, intAttr("to", elemFloat))
}

// double is a float64 scalar constant, whatever the head's precision.
func (g *builder) double(hint string, v float64) string {
	t := tensor{name: g.name(hint), f64: []float64{v}}
	g.inits = append(g.inits, t)
	return t.name
}
