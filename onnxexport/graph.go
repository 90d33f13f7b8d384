package onnxexport

import (
	"fmt"
	"math"

	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/preprocessing"
)

// builder collects the nodes and initializers of a graph, in order, for
// one opset of the default domain (the reductions' axes moved from an
// attribute to an input in opset 18).
type builder struct {
	opset int64
	// single computes the head in float32; otherwise in float64, as
	// dpfeat predict does, the scores rounded to float32 at the end.
	single bool
	prefix string // of every tensor and node name the builder invents
	nodes  []node
	inits  []tensor
	count  int
}

func (g *builder) name(hint string) string {
	g.count++
	return fmt.Sprintf("%s%s_%d", g.prefix, hint, g.count)
}

// opTo adds a node with one output named out.
func (g *builder) opTo(out, op string, inputs []string, attrs ...attr) string {
	g.nodes = append(g.nodes, node{op: op, name: g.name(op), inputs: inputs, outputs: []string{out}, attrs: attrs})
	return out
}

// op adds a node with one fresh output.
func (g *builder) op(op string, inputs []string, attrs ...attr) string {
	return g.opTo(g.name(op+"_out"), op, inputs, attrs...)
}

// floats is a constant in the head's precision.
func (g *builder) floats(hint string, dims []int64, v []float64) string {
	if g.single {
		return g.floats32(hint, dims, models.Float32s(v))
	}
	t := tensor{name: g.name(hint), dims: dims, f64: v}
	g.inits = append(g.inits, t)
	return t.name
}

// floats32 is a float32 constant.
func (g *builder) floats32(hint string, dims []int64, v []float32) string {
	t := tensor{name: g.name(hint), dims: dims, f32: v}
	g.inits = append(g.inits, t)
	return t.name
}

func (g *builder) scalar(hint string, v float64) string { return g.floats(hint, nil, []float64{v}) }

// toHead casts float32 rows to the head's precision.
func (g *builder) toHead(x string) string {
	if g.single {
		return x
	}
	return g.op("Cast", []string{x}, intAttr("to", elemDouble))
}

// f64s widens float32 values (a classifier file's tensors).
func f64s(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func (g *builder) ints(hint string, v ...int64) string {
	t := tensor{name: g.name(hint), dims: []int64{int64(len(v))}, i64: v}
	g.inits = append(g.inits, t)
	return t.name
}

// reduce applies a Reduce* operator over axes.
func (g *builder) reduce(op, x string, keep bool, axes ...int64) string {
	k := int64(0)
	if keep {
		k = 1
	}
	if g.opset >= 18 || (op == "ReduceSum" && g.opset >= 13) {
		return g.op(op, []string{x, g.ints("axes", axes...)}, intAttr("keepdims", k))
	}
	return g.op(op, []string{x}, intsAttr("axes", axes...), intAttr("keepdims", k))
}

// norm is the L2 norm of each row of x [N, D], as [N, 1].
func (g *builder) norm(x string) string {
	return g.op("Sqrt", []string{g.reduce("ReduceSumSquare", x, true, 1)})
}

// tiny stands for 0 in divisions: a zero vector divided by it stays zero,
// as preprocessing's unit and the cosine distance leave it.
const tiny = 1e-30

// unit scales each row of x to unit L2 norm.
func (g *builder) unit(x string) string {
	return g.op("Div", []string{x, g.op("Max", []string{g.norm(x), g.scalar("tiny", tiny)})})
}

// preprocess adds package preprocessing's steps, in its order, to the
// rows of x [N, d]; it returns the result and its dimension.
func (g *builder) preprocess(p preprocessing.Preprocessing, x string, d int) (string, int) {
	if t := p.Transform; t != nil {
		x = g.unit(x)
		x = g.op("Sub", []string{x, g.floats("transform_mean", []int64{int64(d)}, roundTrip(t.Mean))})
		if t.Scale != nil {
			x = g.op("Mul", []string{x, g.floats("transform_scale", []int64{int64(d)}, roundTrip(t.Scale))})
		}
		if t.Projection != nil {
			// MatMul by Pᵀ: [d, Dims].
			pt := make([]float64, d*t.Dims)
			for k := 0; k < t.Dims; k++ {
				for i := 0; i < d; i++ {
					pt[i*t.Dims+k] = float64(float32(t.Projection[k*d+i]))
				}
			}
			x = g.op("MatMul", []string{x, g.floats("transform_projection", []int64{int64(d), int64(t.Dims)}, pt)})
			d = t.Dims
		}
	}
	if p.Normalize {
		x = g.unit(x)
	}
	if p.Pool > 1 {
		k := p.PooledDim(d)
		m := make([]float64, d*k)
		for grp := 0; grp < k; grp++ {
			lo, hi := grp*p.Pool, min((grp+1)*p.Pool, d)
			for i := lo; i < hi; i++ {
				m[i*k+grp] = 1 / float64(hi-lo)
			}
		}
		x = g.op("MatMul", []string{x, g.floats("pool", []int64{int64(d), int64(k)}, m)})
		d = k
	}
	if p.Scale != 0 {
		x = g.op("Mul", []string{x, g.scalar("scale", p.Scale)})
	}
	if p.Center != nil {
		x = g.op("Sub", []string{x, g.floats("center", []int64{int64(d)}, roundTrip(p.Center))})
	}
	if p.Clip > 0 {
		// x·min(1, C′/‖x‖): C′/0 = +Inf leaves a zero vector as it is.
		lim := g.scalar("clip", p.Clip*preprocessing.ClipMargin)
		f := g.op("Min", []string{g.op("Div", []string{lim, g.norm(x)}), g.scalar("one", 1)})
		x = g.op("Mul", []string{x, f})
	}
	return x, d
}

// head adds the classifier's scores of the preprocessed rows x [N, d]
// (named scores, [N, M] float32) and the predicted class (named class,
// [N] int64, the first of equal scores, as dpfeat predict).
func (g *builder) head(c *models.Classifier, x string, d int, scores, class string) {
	m := len(c.Classes)
	var s string
	switch c.Kind {
	case "prototypes":
		k := max(1, c.PerClass)
		var dist string
		if c.Distance == "cosine" {
			// 1 − (x·w)/(‖x‖‖w‖), 1 where either is zero.
			wt := make([]float64, d*m*k)
			for p := 0; p < m*k; p++ {
				var wn float64
				for _, v := range c.Weight[p*d : (p+1)*d] {
					wn += float64(v) * float64(v)
				}
				inv := 0.0
				if wn > 0 {
					inv = 1 / math.Sqrt(wn)
				}
				for i, v := range c.Weight[p*d : (p+1)*d] {
					wt[i*m*k+p] = float64(v) * inv
				}
			}
			dot := g.op("MatMul", []string{x, g.floats("prototypes_t", []int64{int64(d), int64(m * k)}, wt)})
			invx := g.op("Div", []string{g.scalar("one", 1), g.op("Max", []string{g.norm(x), g.scalar("tiny", tiny)})})
			dist = g.op("Sub", []string{g.scalar("one", 1), g.op("Mul", []string{dot, invx})})
		} else {
			// ‖x − w‖ for every prototype, from the differences (not
			// ‖x‖² − 2x·w + ‖w‖², which cancels near a prototype).
			xr := g.op("Reshape", []string{x, g.ints("shape", -1, 1, int64(d))})
			diff := g.op("Sub", []string{xr, g.floats("prototypes", []int64{int64(m * k), int64(d)}, f64s(c.Weight[:m*k*d]))})
			dist = g.op("Sqrt", []string{g.reduce("ReduceSumSquare", diff, false, 2)})
		}
		per := g.op("Reshape", []string{dist, g.ints("shape", -1, int64(m), int64(k))})
		s = g.op("Neg", []string{g.reduce("ReduceMean", per, false, 2)})
	default:
		s = g.op("Gemm", []string{x, g.floats("weight", []int64{int64(m), int64(d)}, f64s(c.Weight)),
			g.floats("bias", []int64{int64(m)}, f64s(c.Bias))}, intAttr("transB", 1))
	}
	g.opTo(class, "ArgMax", []string{s}, intAttr("axis", 1), intAttr("keepdims", 0))
	if g.single {
		g.opTo(scores, "Identity", []string{s})
	} else {
		g.opTo(scores, "Cast", []string{s}, intAttr("to", elemFloat))
	}
}

// graphBody is the builder's nodes and initializers as GraphProto fields.
func (g *builder) graphBody() []byte {
	var b []byte
	for _, n := range g.nodes {
		b = appendBytes(b, graphNode, n.marshal())
	}
	for _, t := range g.inits {
		b = appendBytes(b, graphInitializer, t.marshal())
	}
	return b
}

// roundTrip rounds to float32 and back: a classifier file stores its
// vectors in float32, and prediction uses what the file holds.
func roundTrip(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(float32(v))
	}
	return out
}
