package solvers

import (
	"context"
	"fmt"
	"runtime"
)

// A Pass is one pass of an iterative method over the rows whose result is
// a sum over rows, so that the passes over disjoint parts of the data (a
// dataset's shards, on a distributed runner) add up to the pass over the
// whole: DP-FC's covariance pass and its gradient steps (Mehta et al. 2023,
// Alg. 1, Lines 1–3 and 5–7). Each row's contribution is bounded inside the
// pass (u clipped to ClipCov, each gradient to ClipGrad), so the parts are
// bounded before they are added; the noise is added once, to the sum.
type Pass struct {
	// Kind is PassFCCovariance or PassFCGradient.
	Kind string `json:"kind"`
	// M is the number of classes; ClipCov and Normalize make u (BiasFeatures).
	M         int     `json:"m"`
	ClipCov   float64 `json:"clip_cov"`
	Normalize bool    `json:"normalize"`
	// ClipGrad and Theta (M×D) are a gradient step's.
	ClipGrad float64   `json:"clip_grad,omitempty"`
	Theta    []float64 `json:"theta,omitempty"`
}

// The passes.
const (
	// PassFCCovariance sums uuᵀ (D×D, D = dim + 1) and then the class
	// counts (M values) into one vector.
	PassFCCovariance = "fc-covariance"
	// PassFCGradient sums the clipped gradients at Theta (M×D).
	PassFCGradient = "fc-gradient"
)

// RunPass computes p over rows (streamed, nothing kept): the part of the
// sum these rows contribute.
func RunPass(ctx context.Context, rows Rows, p Pass) ([]float64, error) {
	D := rows.Dim() + 1
	us := newUStream[float32](rows, p.M, p.ClipCov, p.Normalize, 0)
	switch p.Kind {
	case PassFCCovariance:
		acc := newGramAcc(D, runtime.GOMAXPROCS(0))
		counts := make([]int64, p.M)
		err := us.each(ctx, func(u uBlock[float32]) error {
			eachGroup(u.Groups, 0, u.N, func(a, _ int) { counts[u.Y[a]]++ })
			acc.addScaled(u.X, u.N, rootWeights(u.Groups, u.W, u.N))
			return nil
		})
		if err != nil {
			return nil, err
		}
		out := append(acc.result(), make([]float64, p.M)...)
		for c, n := range counts {
			out[D*D+c] = float64(n)
		}
		return out, nil
	case PassFCGradient:
		if len(p.Theta) != p.M*D {
			return nil, fmt.Errorf("pass %s: θ has %d values; expected %d×%d", p.Kind, len(p.Theta), p.M, D)
		}
		grad := newGradient32(p.M, D)
		grad.setTheta(p.Theta)
		sum := make([]float64, p.M*D)
		err := us.each(ctx, func(u uBlock[float32]) error {
			grad.add(u, p.ClipGrad, sum)
			return nil
		})
		return sum, err
	}
	return nil, fmt.Errorf("unknown pass %q", p.Kind)
}
