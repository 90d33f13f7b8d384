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
package preprocessing

import "math"

// ClipMargin shrinks every clipping norm a little: C·ClipMargin rounds to
// at most C.
const ClipMargin = 1 - 1e-6

// Preprocessing is the sequence above; zero values skip a step.
type Preprocessing struct {
	Normalize bool    `json:"normalize"`
	Pool      int     `json:"pool,omitempty"`
	Scale     float64 `json:"scale,omitempty"`
	// Center is stored in a classifier file as its "center" tensor.
	Center []float64 `json:"-"`
	Clip   float64   `json:"clip,omitempty"`
}

// PooledDim returns the dimension after pooling a d-dimensional vector.
func (p Preprocessing) PooledDim(d int) int {
	if p.Pool > 1 {
		return (d + p.Pool - 1) / p.Pool
	}
	return d
}

// Apply preprocesses x (modifying it) and returns the result, which is
// shorter than x when pooling.
func (p Preprocessing) Apply(x []float64) []float64 {
	if p.Normalize {
		if n := Norm(x); n > 0 {
			for i := range x {
				x[i] /= n
			}
		}
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

// Norm is the L2 norm of x.
func Norm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}
