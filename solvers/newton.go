package solvers

import (
	"context"
	"fmt"
	"math"
	"runtime"

	"github.com/dpfeat/dpfeat/accounting"
)

func init() {
	Register(Method{Name: "dpnewton", Private: true, Summary: "DP Newton's method on the one-vs-all sigmoid loss (Mehta et al. 2023, Alg. 1)",
		Stream: func(ctx context.Context, r Rows, m int, o *Options) (*Result, error) {
			return fitNewton(ctx, r, m, o, true)
		}})
	Register(Method{Name: "newton", Private: false, Summary: "non-private Newton's method on the one-vs-all sigmoid loss, to convergence",
		Stream: func(ctx context.Context, r Rows, m int, o *Options) (*Result, error) {
			return fitNewton(ctx, r, m, o, false)
		}})
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
//
// The data are streamed: each step is one pass that adds every block's
// gradients (one product Rᵀ·U) and, for each class, its weighted Gram
// Σ ℓ”ᵢ uᵢuᵢᵀ (float32 SYRKs summed in float64), so memory is M·D² plus
// one block, whatever n. When the M Hessians do not fit in the memory
// budget, classes are taken in chunks, one pass each. Class j's Hessian
// only depends on θⱼ, so a chunk's classes are updated as soon as they
// are solved.
func fitNewton(ctx context.Context, rows Rows, M int, o *Options, private bool) (*Result, error) {
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
	D := rows.Dim() + 1
	sm := math.Sqrt(float64(M))
	res := &Result{Prep: Preprocessing{Normalize: !o.NoNormalize}}
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
	budget := o.memoryBudget()
	chunks := ClassChunks(M, D, budget)
	// What the Hessians of a chunk and a solve's D×D temporaries leave of
	// the budget may keep u in memory between passes.
	us := newUStream(rows, M, C, !o.NoNormalize, budget-int64(len(chunks[0]))*classBytes(D)-int64(D)*int64(D)*32)
	if len(chunks) > 1 {
		o.note("%s: the %d Hessians of %d×%d do not fit in the memory budget (--memory): %d passes over the data per step, %d classes each", methodName(private), M, D, D, len(chunks), len(chunks[0]))
	}
	theta := startTheta(M, D, biasInit, C)
	counts := make([]int64, M)
	var n float64
	var lambda float64
	zbuf := make([]float64, uBlockRows*M)
	grad := make([]float64, M*D)
	var w32 []float32
	for t := 0; t < T; t++ {
		clear(grad)
		for ci, chunk := range chunks {
			acc := make([]*gram32, len(chunk))
			for a := range acc {
				acc[a] = newGram32(D)
			}
			o.progress("%s step %d/%d: pass %d/%d over the data", methodName(private), t+1, T, ci+1, len(chunks))
			err := us.each(ctx, func(u *Data) error {
				scores(u, theta, zbuf)
				for i := 0; i < u.N; i++ {
					row := zbuf[i*M : (i+1)*M]
					for j := range row {
						row[j] = sigmoid(row[j])
					}
				}
				// ℓ''ᵢ = σ(1−σ): class j's Hessian is the Gram of the rows
				// scaled by √ℓ''ᵢ.
				if cap(w32) < u.N*D {
					w32 = make([]float32, u.N*D)
				}
				for a, j := range chunk {
					w := w32[:u.N*D]
					for i := 0; i < u.N; i++ {
						s := zbuf[i*M+j]
						f := math.Sqrt(s * (1 - s))
						for k, v := range u.Row(i) {
							w[i*D+k] = float32(f * v)
						}
					}
					acc[a].add(w, u.N)
				}
				if ci == 0 {
					// Residuals r = σ − y and the gradient sums Rᵀ·U
					// (|ℓ'| ≤ 1 and ‖u‖ ≤ C: no clipping needed).
					for i, y := range u.Y {
						zbuf[i*M+int(y)] -= 1
						if t == 0 {
							counts[y]++
						}
					}
					addClippedGradient(u, zbuf, 0, grad)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			if t == 0 && ci == 0 {
				if err := checkCounts(counts); err != nil {
					return nil, err
				}
				var total int64
				for _, c := range counts {
					total += c
				}
				n = float64(total)
				if lambda, err = p.Positive("lambda", 2*math.Sqrt(float64(D))*z*sm*betaH*C*C/n+1e-4*betaH*C*C/float64(D)); err != nil {
					return nil, err
				}
			}
			for a, j := range chunk {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				H := acc[a].result()
				acc[a] = nil
				g := grad[j*D : (j+1)*D]
				if private {
					for k, v := range o.Gaussian("gradient", D, z*sm*C) {
						g[k] += v
					}
					symAdd(H, 1, o.Symmetric("hessian", D, z*sm*betaH*C*C))
				}
				for k := range g {
					g[k] = g[k]/n + lambda*theta[j*D+k]
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
				step, err := solveSPD(H, D, g)
				if err != nil {
					return nil, fmt.Errorf("newton step %d, class %d: %w", t+1, j, err)
				}
				for k, v := range step {
					theta[j*D+k] -= lr * v
				}
			}
			if len(chunks) > 1 {
				runtime.GC()
			}
		}
		o.progress("%s step %d/%d", methodName(private), t+1, T)
	}
	if len(chunks) > 1 {
		p.Record("passes", T*len(chunks))
	}
	res.W, res.B = fromBias(theta, M, D-1, C)
	if private {
		publicN(res, int(n))
	}
	p.Finish(res)
	return res, nil
}

func methodName(private bool) string {
	if private {
		return "dpnewton"
	}
	return "newton"
}
