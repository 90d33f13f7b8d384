package solvers

import (
	"context"
	"fmt"
	"math"

	"github.com/dpfeat/dpfeat/accounting"
)

func init() {
	Register(Method{Name: "dpnewton", Private: true, Summary: "DP Newton's method on the one-vs-all sigmoid loss (Mehta et al. 2023, Alg. 1)",
		Run: func(ctx context.Context, d *Data, o *Options) (*Result, error) { return fitNewton(ctx, d, o, true) }})
	Register(Method{Name: "newton", Private: false, Summary: "non-private Newton's method on the one-vs-all sigmoid loss, to convergence",
		Run: func(ctx context.Context, d *Data, o *Options) (*Result, error) { return fitNewton(ctx, d, o, false) }})
}

// βH bounds the sigmoid cross-entropy's second derivative: σ(z)(1−σ(z)) ≤ ¼.
const betaH = 0.25

// fitNewton is DP-Newton (Mehta et al. 2023, Alg. 1) and its non-private
// reference. Per class j and step t, with features u clipped to C (bias as a
// constant coordinate, ‖u‖ ≤ C):
//
//	g̃ = (1/n)Σ ℓ'(θⱼ·uᵢ) uᵢ + N(0, (z√M·C/n)²)                (Line 7)
//	H̃ = (1/n)Σ ℓ''(θⱼ·uᵢ) uᵢuᵢᵀ + N(0, (z√M·β_H C²/n)²) + λI (Lines 6, 8; PSD-projected)
//	θⱼ ← θⱼ − η H̃⁻¹ g̃                                         (Line 9)
//
// The step is the Newton step of the regularised objective
// (1/n)Σℓ + (λ/2)‖θⱼ‖²: λθⱼ, a data-independent term, is added to the noisy
// gradient as λI is to the noisy Hessian, so that more steps converge to
// the regularised optimum (the paper's Line 7 leaves it out; from θ = 0, with
// the default T = 1, both agree).
//
// Each gradient (sensitivity C, since |ℓ'| ≤ 1) and each Hessian (β_H C²)
// gets noise z√M times its sensitivity: 2M releases per step of multiplier
// z√M, so μ² = 2T/z² by exact GDP composition (the paper's T/z²-zCDP).
//
// Hyperparameters: clip C (1), steps T (1 private, 10 non-private), lr η (1:
// the Newton step), lambda (the Hessian noise's expected spectral norm
// 2√D·z√M·β_H C²/n, plus 1e-4·β_H C²/D), bias_init (0, as the paper).
func fitNewton(ctx context.Context, d *Data, o *Options, private bool) (*Result, error) {
	p := NewParams(o)
	C := 1.0
	var err error
	if private {
		if C, err = p.Positive("clip", 1); err != nil {
			return nil, err
		}
	}
	defSteps := 1
	if !private {
		defSteps = 10
	}
	T, err := p.Count("steps", defSteps)
	if err != nil {
		return nil, err
	}
	lr, err := p.Positive("lr", 1)
	if err != nil {
		return nil, err
	}
	biasInit := p.Get("bias_init", 0)
	u := withBias(d, C)
	D, M, n := u.D, u.M, float64(u.N)
	sm := math.Sqrt(float64(M))
	res := &Result{Prep: Preprocessing{Normalize: true}}
	z := 0.0
	if private {
		build := func(z float64) []accounting.Mechanism {
			return []accounting.Mechanism{
				{Name: "noisy gradient of one class", Kind: accounting.KindGaussian, Sensitivity: C, NoiseStd: z * sm * C, Count: M * T},
				{Name: "noisy Hessian of one class", Kind: accounting.KindGaussian, Sensitivity: betaH * C * C, NoiseStd: z * sm * betaH * C * C, Count: M * T},
			}
		}
		var g accounting.Guarantee
		if z, g, err = Calibrate(o, build); err != nil {
			return nil, err
		}
		res.Guarantee, res.NoiseMultiplier = g, z
		res.Prep.Clip = C
	} else {
		res.Guarantee = accounting.NonPrivate("non-private reference: no clipping, no noise")
	}
	lambda, err := p.Positive("lambda", 2*math.Sqrt(float64(D))*z*sm*betaH*C*C/n+1e-4*betaH*C*C/float64(D))
	if err != nil {
		return nil, err
	}
	theta := startTheta(M, D, biasInit, C)
	zbuf := make([]float64, u.N*M)
	weighted := make([]float64, u.N*D)
	H := make([]float64, D*D)
	for t := 0; t < T; t++ {
		scores(u, theta, zbuf)
		for j := 0; j < M; j++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			grad := make([]float64, D)
			for i := 0; i < u.N; i++ {
				s := sigmoid(zbuf[i*M+j])
				r := s
				if int(u.Y[i]) == j {
					r -= 1
				}
				row := u.Row(i)
				w := math.Sqrt(s * (1 - s))
				for k, v := range row {
					grad[k] += r * v
					weighted[i*D+k] = w * v
				}
			}
			for i := range H {
				H[i] = 0
			}
			syrk(H, D, weighted, u.N, 1)
			if private {
				for k, v := range o.Gaussian("gradient", D, z*sm*C) {
					grad[k] += v
				}
				symAdd(H, 1, o.Symmetric("hessian", D, z*sm*betaH*C*C))
			}
			for k := range grad {
				grad[k] = grad[k]/n + lambda*theta[j*D+k]
			}
			for k := range H {
				H[k] /= n
			}
			if private {
				if err := psdProject(H, D); err != nil {
					return nil, err
				}
			}
			addDiag(H, D, lambda)
			step, err := solveSPD(H, D, grad)
			if err != nil {
				return nil, fmt.Errorf("newton step %d, class %d: %w", t+1, j, err)
			}
			for k, v := range step {
				theta[j*D+k] -= lr * v
			}
		}
		o.progress("newton step %d/%d", t+1, T)
	}
	res.W, res.B = fromBias(theta, M, d.D, C)
	if private {
		publicN(res, d.N)
	}
	p.Finish(res)
	return res, nil
}
