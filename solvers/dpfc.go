package solvers

import (
	"context"
	"fmt"
	"math"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/internal/phases"
)

func init() {
	Register(Method{Name: "dpfc", Reads: []string{OptMemory, OptSigma, OptRunner, OptNPublic}, Params: []Param{
		{Name: "clip_cov", Rule: Positive, Default: 1, Doc: "clipping norm C_G of the covariance features"},
		{Name: "clip_grad", Rule: Positive, Default: 1, Doc: "clipping norm C_g of per-example gradients"},
		{Name: "steps", Rule: Whole, Default: 10, Doc: "iterations T"},
		{Name: "lr", Rule: Positive, Default: 8, Doc: "learning rate η of the preconditioned step"},
		{Name: "lambda", Rule: Positive, Derived: true, Doc: "ridge λ (default: the covariance noise's expected spectral norm 2√D·z·C_G²/n, plus 1e-4·C_G²/D)"},
		lowBiasInit,
	}, Features: &FeatureMap{Clip: "clip_cov", GradClip: "clip_grad"}, Private: true, Summary: "DP-SGD with a private feature-covariance preconditioner (Mehta et al. 2023, Alg. 3)", Stream: fitFC})
}

// fitFC is DP-FC (Mehta et al. 2023, Alg. 3): one noisy release of the
// feature covariance, then T full-batch steps of the one-vs-all sigmoid
// cross-entropy whose per-example gradients are clipped jointly over all
// classes, noised, and preconditioned by the covariance:
//
//	G̃ = (Σ ũᵢũᵢᵀ + N(0, (z C_G²)²))/n + λI        (Lines 1–3; PSD-projected)
//	g̃ₜ = (Σ clip_{C_g}(∇ℓᵢ(θₜ)) + N(0, (z C_g)²))/n (Lines 6–7)
//	θₜ₊₁ = θₜ − η g̃ₜ G̃⁻¹                          (Line 8)
//
// Features carry the bias as a constant coordinate, u = [clip(x), C_G]/√2, so
// ‖u‖ ≤ C_G. Releases: the covariance (L2 sensitivity C_G²) and T gradient
// sums (C_g), each with noise z times its sensitivity: T+1 Gaussian releases
// (Thm. 2.3), accounted exactly by GDP, μ = √(T+1)/z. The preconditioner is
// factored once and reused for every class and step.
//
// The data are streamed: one pass accumulates the covariance (float32
// blocks, their products summed in float64) and the class counts, then
// each step is one pass that adds the blocks' clipped gradients in
// float64 (gradientBlock), so memory is O(D² + M·D) plus one block,
// whatever n; u is kept (in float64, from the first step on) between
// passes when it fits in the memory budget.
//
// Hyperparameters: clip_cov C_G (1) and clip_grad C_g (1) — features are
// unit-normalised, so neither clips at the start; steps T (10); lr η (8:
// the covariance E[uuᵀ] overstates the sigmoid loss's curvature
// E[σ'(z)uuᵀ] by 1/σ' ≥ 4, so η ≈ 2/β_H makes the preconditioned step
// Newton-like; chosen on Fashion-MNIST's public half); lambda (the noise's expected
// spectral norm 2√D·z·C_G²/n, plus 1e-4·C_G²/D); bias_init (−10, Mehta et
// al. 2022: all sigmoid outputs start near 0, so the first step is driven by
// the positive examples).
func fitFC(ctx context.Context, rows Rows, M int, o *Options) (*Result, error) {
	p := NewParams(o)
	cg := p.Get("clip_cov")
	cgrad := p.Get("clip_grad")
	T := p.Int("steps")
	lr := p.Get("lr")
	biasInit := p.Get("bias_init")
	D := rows.Dim() + 1
	if err := o.squares(D-1, D, 2); err != nil {
		return nil, err
	}
	build := func(z float64) []accounting.Mechanism {
		return []accounting.Mechanism{
			{Name: "noisy feature covariance", Kind: accounting.KindGaussian, Sensitivity: cg * cg, NoiseStd: z * cg * cg, Count: 1},
			{Name: "noisy clipped gradient sum", Kind: accounting.KindGaussian, Sensitivity: cgrad, NoiseStd: z * cgrad, Count: T},
		}
	}
	z, g, err := o.Calibrate(build)
	if err != nil {
		return nil, err
	}
	// Pass 1 (Lines 1–3): Σ uuᵀ and the class counts, here or elsewhere.
	o.progress("dpfc: covariance pass")
	stop := phases.Start("covariance pass")
	sum, err := o.pass(ctx, rows, Pass{Kind: PassCovariance, M: M, Clip: cg, Normalize: !o.NoNormalize}, D*D+M)
	stop()
	if err != nil {
		return nil, err
	}
	cov, counts := sum[:D*D], make([]int64, M)
	for c := range counts {
		counts[c] = int64(sum[D*D+c])
	}
	var total int64
	for _, c := range counts {
		total += c
	}
	n, err := o.Rows(total)
	if err != nil {
		return nil, err
	}
	o.released("covariance", 0, o.Symmetric("covariance", cov, D, z*cg*cg, cg*cg), cov)
	noteCentring(o, fcCentring(cov, D, n, cg, z*cg*cg))
	for i := range cov {
		cov[i] /= n
	}
	if err := psdProjectNoisy(cov, D); err != nil {
		return nil, err
	}
	lambda, err := p.Derived("lambda", 2*math.Sqrt(float64(D))*z*cg*cg/n+1e-4*cg*cg/float64(D))
	if err != nil {
		return nil, err
	}
	addDiag(cov, D, lambda)
	pre, err := factor(cov, D)
	if err != nil {
		return nil, err
	}
	theta := startTheta(M, D, biasInit, cg)
	// The covariance's accumulators and factors take a few D×D; the rest
	// of the memory budget may keep u for the steps after the first.
	gp := newGradientPass(newUStream[float64](rows, M, cg, !o.NoNormalize, o.memoryBudget()-int64(D)*int64(D)*48))
	row := make([]float64, D)
	for t := 0; t < T; t++ {
		// One pass per step (Lines 5–7): scores, residuals and the clipped
		// gradient sum.
		stop := phases.Start("gradient steps")
		o.released("theta", t, 0, theta) // the state the step's gradients are taken at
		gsum, err := gp.run(ctx, o, Pass{Kind: PassGradient, M: M, Clip: cg, Normalize: !o.NoNormalize, ClipGrad: cgrad, Theta: theta})
		stop()
		if err != nil {
			return nil, err
		}
		o.released("gradient", 0, o.Gaussian("gradient", gsum, z*cgrad, cgrad), gsum) // now noisy
		for j := 0; j < M; j++ {
			for k := range row {
				row[k] = gsum[j*D+k] / n
			}
			step, err := pre.solve(row)
			if err != nil {
				return nil, fmt.Errorf("dpfc step %d: %w", t+1, err)
			}
			for k, v := range step {
				theta[j*D+k] -= lr * v
			}
		}
		o.progress("dpfc step %d/%d", t+1, T)
	}
	res := &Result{Prep: Preprocessing{Normalize: !o.NoNormalize, Clip: cg}, Guarantee: g, NoiseMultiplier: z}
	res.W, res.B = fromBias(theta, M, D-1, cg)
	publicN(o, res, int(total))
	p.Finish(res)
	return res, nil
}

// fcCentring reads Centring from DP-FC's released Σuuᵀ, each entry's
// noise std covStd: u = [clip(x), C_G]/√2, so Σx_j = (2/C_G)·Σu_j u_D
// (the last column) and Σ‖x‖² = 2·Σ_{j<D} Σu_j².
func fcCentring(cov []float64, D int, n, cg, covStd float64) Centring {
	sum := make([]float64, D-1)
	var sq float64
	for j := range sum {
		sum[j] = cov[j*D+D-1] * 2 / cg
		sq += 2 * cov[j*D+j]
	}
	s := 2 * covStd / cg
	return centring(sum, s*s, sq, n)
}
