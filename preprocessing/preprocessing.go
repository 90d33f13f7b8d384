// Package preprocessing is the one description of what is done to a
// feature vector before a solver sees it and before a classifier scores it
// — the same steps at training and at prediction, so that a classifier
// applies exactly what its method trained with. In this order:
//
//  1. Normalize: scale to unit L2 norm (a per-example map, free of privacy
//     cost);
//  2. Pool: average groups of Pool consecutive features (DPPL-Mean's
//     k_pool);
//  3. Scale: multiply by Scale (DP-LP's norm C);
//  4. Center: subtract Center (DP-LP's private mean of the scaled rows);
//  5. Clip: scale down to L2 norm Clip·ClipMargin when longer.
//
// The clip targets C·(1 − 10⁻⁶), not C, so that no float64 or float32
// rounding can leave a clipped vector longer than the C its sensitivity is
// stated with; prediction clips the same way as training (the classifier
// file once clipped to C while its method trained at C·(1 − 10⁻⁶)).
//
// # Learned transform
//
// A fit may first learn a linear transform of the unit-normalised
// features (Transform: centring, per-coordinate standardisation,
// projection onto principal directions, whitening; learned privately or
// from public data, see package solvers' transform.go). It is applied
// before the steps above, which then act on the transformed vector —
// step 1 renormalising it — so a classifier stores the transform and
// its method's steps, and prediction applies both in that order:
//
//	t = P·(S ∘ (x/‖x‖ − m))    (m Mean, S Scale, P Projection; each optional)
//	then steps 1–5 on t.
package preprocessing

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
)

// ClipMargin shrinks every clipping norm a little: C·ClipMargin rounds to
// at most C.
const ClipMargin = 1 - 1e-6

// Preprocessing is the sequence above; zero values skip a step.
type Preprocessing struct {
	// Transform, when set, is applied first (see the package comment).
	Transform *Transform `json:"transform,omitempty"`
	Normalize bool       `json:"normalize"`
	Pool      int        `json:"pool,omitempty"`
	Scale     float64    `json:"scale,omitempty"`
	// Center is stored in a classifier file as its "center" tensor.
	Center []float64 `json:"-"`
	Clip   float64   `json:"clip,omitempty"`
}

// PooledDim returns the dimension after the transform and pooling of a
// d-dimensional vector: the dimension of the method's weights.
func (p Preprocessing) PooledDim(d int) int {
	if p.Transform != nil {
		d = p.Transform.OutDim(d)
	}
	if p.Pool > 1 {
		return (d + p.Pool - 1) / p.Pool
	}
	return d
}

// Check validates the learned parts for inputs of dimension d: the
// transform's shapes and values, the centre's length, and that every
// value is finite (a classifier file is checked before it is used).
func (p Preprocessing) Check(d int) error {
	if p.Transform != nil {
		if err := p.Transform.Check(d); err != nil {
			return err
		}
	}
	if k := p.PooledDim(d); p.Center != nil && len(p.Center) != k {
		return fmt.Errorf("centering vector of length %d for dimension %d", len(p.Center), k)
	}
	if i := firstNonFinite(p.Center); i >= 0 {
		return fmt.Errorf("centre %d is %v: refusing a non-finite model", i, p.Center[i])
	}
	return nil
}

// firstNonFinite is the index of the first NaN or ±Inf in x, or −1.
func firstNonFinite(x []float64) int {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return i
		}
	}
	return -1
}

// Apply preprocesses x (modifying it) and returns the result, which is
// shorter than x when pooling.
func (p Preprocessing) Apply(x []float64) []float64 {
	if p.Transform != nil {
		x = p.Transform.Apply(x)
	}
	return p.finish(x)
}

// ApplyRows preprocesses the n rows of x (d values each, modified) into
// out (n × PooledDim(d)), each row bit for bit as Apply does; with a
// projecting transform, a block of rows at a time (Transform.ApplyRows).
func (p Preprocessing) ApplyRows(x []float64, n, d int, out []float64) {
	k := p.PooledDim(d)
	if p.Transform != nil {
		t := p.Transform.OutDim(d)
		mid := out
		if t != k { // pooling: the transform's rows first
			mid = make([]float64, n*t)
		}
		p.Transform.ApplyRows(x, n, d, mid)
		x, d = mid, t
	}
	for i := 0; i < n; i++ {
		copy(out[i*k:(i+1)*k], p.finish(x[i*d:(i+1)*d]))
	}
}

// finish is what Apply does after the transform: normalisation, pooling,
// scale, centre and clip.
func (p Preprocessing) finish(x []float64) []float64 {
	if p.Normalize {
		unit(x)
	}
	if p.Pool > 1 {
		out := x[:p.PooledDim(len(x))]
		for g := range out {
			lo, hi := g*p.Pool, min((g+1)*p.Pool, len(x))
			var s float64
			for _, v := range x[lo:hi] {
				s += v
			}
			out[g] = s / float64(hi-lo)
		}
		x = out
	}
	if p.Scale != 0 {
		for i := range x {
			x[i] *= p.Scale
		}
	}
	if p.Center != nil {
		for i := range x {
			x[i] -= p.Center[i]
		}
	}
	if p.Clip > 0 {
		if n, lim := Norm(x), p.Clip*ClipMargin; n > lim {
			f := lim / n
			for i := range x {
				x[i] *= f
			}
		}
	}
	return x
}

// unit scales x to unit L2 norm (a zero vector stays zero).
func unit(x []float64) {
	if n := Norm(x); n > 0 {
		for i := range x {
			x[i] /= n
		}
	}
}

// Norm is the L2 norm of x.
func Norm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// Transform is a learned linear map of unit-normalised features: the
// input is scaled to unit L2 norm, Mean is subtracted, each coordinate is
// multiplied by Scale, and the result is multiplied by Projection (Dims
// rows of In values, row-major). A nil slice skips its step. A
// classifier file stores the slices as tensors "transform.mean",
// "transform.scale" and "transform.projection".
type Transform struct {
	// Kind is what was learned: center, standardize, pca or whiten.
	Kind string `json:"kind"`
	// Source says where it was learned: "private" (noisy releases, in the
	// guarantee) or "public" (a public file, free).
	Source string `json:"source"`
	// In is the input dimension, Dims the output's (In without Projection).
	In   int `json:"in"`
	Dims int `json:"dims"`

	Mean       []float64 `json:"-"`
	Scale      []float64 `json:"-"`
	Projection []float64 `json:"-"`
}

// OutDim is the output dimension for an input of dimension d.
func (t *Transform) OutDim(d int) int {
	if t.Projection != nil {
		return t.Dims
	}
	return d
}

// Check validates the shapes and that every value is finite for inputs of
// dimension d.
func (t *Transform) Check(d int) error {
	if t.In != d {
		return fmt.Errorf("transform for %d features applied to %d", t.In, d)
	}
	if t.Projection != nil && (t.Dims < 1 || t.Dims > d || len(t.Projection) != t.Dims*d) {
		return fmt.Errorf("transform projection of %d values for %d×%d", len(t.Projection), t.Dims, d)
	}
	if t.Mean == nil {
		return fmt.Errorf("transform without its mean (every kind centres)")
	}
	parts := []struct {
		name string
		v    []float64
	}{{"mean", t.Mean}, {"scale", t.Scale}, {"projection", t.Projection}}
	for _, p := range parts[:2] {
		if p.v != nil && len(p.v) != d {
			return fmt.Errorf("transform %s of length %d for dimension %d", p.name, len(p.v), d)
		}
	}
	for _, p := range parts {
		if i := firstNonFinite(p.v); i >= 0 {
			return fmt.Errorf("transform %s value %d is %v", p.name, i, p.v[i])
		}
	}
	return nil
}

// Apply transforms x (modifying it) and returns the result, a new slice
// when projecting.
func (t *Transform) Apply(x []float64) []float64 {
	t.prepare(x)
	if t.Projection == nil {
		return x
	}
	out := make([]float64, t.Dims)
	t.project(out, x, 1, len(x))
	return out
}

// ApplyRows transforms the n rows of x (d values each, modified) into
// out (n × OutDim(d)): each row bit for bit as Apply does. The
// projection goes a block of rows at a time, so that each of its rows is
// read once per block rather than once per input row (a 2048×2048
// projection is 32 MB: per row, its reading was the cost).
func (t *Transform) ApplyRows(x []float64, n, d int, out []float64) {
	t.applyRows(x, n, d, out, t.project)
}

// ApplyRowsFast is ApplyRows with the projection as one matrix product
// (blas64.Gemm: OpenBLAS in that build): several times faster at large
// D, but a row's last bits may differ from Apply's. It is for rows no
// classifier scores again, such as the public rows a method reads, not
// for training rows, whose map must be the one prediction applies.
func (t *Transform) ApplyRowsFast(x []float64, n, d int, out []float64) {
	t.applyRows(x, n, d, out, func(out, x []float64, n, d int) {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1,
			blas64.General{Rows: n, Cols: d, Stride: d, Data: x},
			blas64.General{Rows: t.Dims, Cols: d, Stride: d, Data: t.Projection},
			0, blas64.General{Rows: n, Cols: t.Dims, Stride: t.Dims, Data: out})
	})
}

// applyRows prepares the n rows of x and projects them with project
// (ApplyRows, ApplyRowsFast), or copies them when t does not project.
func (t *Transform) applyRows(x []float64, n, d int, out []float64, project func(out, x []float64, n, d int)) {
	for i := 0; i < n; i++ {
		t.prepare(x[i*d : (i+1)*d])
	}
	if t.Projection == nil {
		copy(out, x[:n*d])
		return
	}
	project(out, x, n, d)
}

// prepare is what Apply does before projecting: unit norm, the mean
// subtracted, the scale applied.
func (t *Transform) prepare(x []float64) {
	unit(x)
	if t.Mean != nil {
		for i := range x {
			x[i] -= t.Mean[i]
		}
	}
	if t.Scale != nil {
		for i := range x {
			x[i] *= t.Scale[i]
		}
	}
}

// project writes the projections of the n rows of x (d values each) to
// out (n × Dims): out[r·Dims + k] = ⟨Projection row k, row r⟩, by
// floats.Dot whatever the number of rows, so that a block gives the bits
// one row does.
func (t *Transform) project(out, x []float64, n, d int) {
	const block = 32
	for lo := 0; lo < n; lo += block {
		hi := min(lo+block, n)
		for k := 0; k < t.Dims; k++ {
			p := t.Projection[k*d : (k+1)*d]
			for r := lo; r < hi; r++ {
				out[r*t.Dims+k] = floats.Dot(p, x[r*d:(r+1)*d])
			}
		}
	}
}
