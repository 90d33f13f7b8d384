package solvers

import (
	"context"
	"math"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/internal/bigmem"
)

func init() {
	Register(Method{Name: "dplp", Reads: []string{OptSigma, OptNPublic}, Private: true, Params: []Param{
		{Name: "norm", Rule: Positive, Default: 1, Doc: "the fixed norm C rows are scaled to before private centring"},
		{Name: "clip", Rule: Positive, Default: 1, Doc: "clipping norm of per-example gradients"},
		{Name: "steps", Rule: Whole, Default: 100, Doc: "iterations T"},
		{Name: "lr", Rule: Positive, Default: 2, Doc: "learning rate η"},
		{Name: "momentum", Rule: Fraction01, Default: 0.9, Doc: "SGD momentum"},
		{Name: "sigma_ratio", Rule: Positive, Default: 1.5, Doc: "noise multiplier of the centring mean over the gradients' (σ₁/σ₂)"},
	},
		Summary: "private linear probing with private feature centring (Tang et al. 2024, DP-RandP App. G; Phase II)", Run: fitLP})
}

// fitLP is private linear probing as DP-RandP's Appendix G does it
// (Tang, Panda, Sehwal, Mittal 2024, "Differentially Private Image
// Classification by Learning Priors from Random Processes"):
//
//  1. every feature vector is scaled to the fixed norm C, x′ = C·x/‖x‖ (a
//     per-example map: no privacy cost);
//  2. the mean is released by the Gaussian mechanism — the sum (L2
//     sensitivity C under add/remove) plus N(0, (σ₁C)²), divided by the
//     public n — and subtracted from every x′ (App. G: "the input to the
//     training method will just be the difference between the feature and
//     the noisy feature mean");
//  3. a linear layer without bias, zero-initialised, is trained on the
//     softmax cross-entropy by full-batch DP-SGD with momentum (Table 23:
//     "batch size = full, SGD optimizer with momentum = 0.9 … bias = False
//     and zero initialization"): each step's per-example gradients
//     (pᵢ − yᵢ) ⊗ x̃ᵢ are clipped to C_g jointly (the norm factorises),
//     summed, and get N(0, (σ₂C_g)²).
//
// Privacy: one Gaussian release of multiplier σ₁ and T of multiplier σ₂,
// composed exactly in GDP: μ² = 1/σ₁² + T/σ₂², the paper's equivalent
// single-step multiplier σ = (1/σ₁² + T/σ₂²)^(−1/2). dpfeat calibrates
// σ₂ = z and σ₁ = sigma_ratio·z to the target.
//
// Hyperparameters: norm C (1: the scale only trades off against lr),
// clip C_g (1), steps T (100, as App. F/G), lr (2: the best compromise
// over ε ∈ {0.1, 1, 8} with both shared encoders on Fashion-MNIST's public
// half, split 80/20 — a dpfeat sweep over 0.5…128), momentum (0.9), sigma_ratio σ₁/σ₂ (1.5, near Table 23's
// 71/43 and 14/9.33). The classifier stores the noisy mean as its centring
// vector: a test vector is scaled to norm C and centred the same way.
func fitLP(ctx context.Context, d *Data, o *Options) (*Result, error) {
	p := NewParams(o)
	C := p.Get("norm")
	clip := p.Get("clip")
	T := p.Int("steps")
	lr := p.Get("lr")
	mom := p.Get("momentum") // in [0, 1) (its Param.Rule)
	ratio := p.Get("sigma_ratio")
	build := func(z float64) []accounting.Mechanism {
		return []accounting.Mechanism{
			{Name: "noisy feature sum (centring)", Kind: accounting.KindGaussian, Sensitivity: C, NoiseStd: ratio * z * C, Count: 1},
			{Name: "noisy clipped gradient sum", Kind: accounting.KindGaussian, Sensitivity: clip, NoiseStd: z * clip, Count: T},
		}
	}
	z, g, err := o.Calibrate(build)
	if err != nil {
		return nil, err
	}
	D, M := d.D, d.M
	n, err := o.Rows(int64(d.Examples()))
	if err != nil {
		return nil, err
	}
	// Steps 1 and 2: x′ = C·x/‖x‖, the noisy mean, x̃ = x′ − m̃.
	x := &Data{X: bigmem.Float64s(d.N * D), Y: d.Y, N: d.N, D: D, M: M, Groups: d.Groups, W: d.W}
	mean := make([]float64, D)
	w := rowWeights(d.Groups, d.W, d.N) // an example's rows weigh their shares
	for i := 0; i < d.N; i++ {
		row, src := x.Row(i), d.Row(i)
		s := 0.0
		if nrm := l2(src); nrm > 0 {
			s = C / nrm
		}
		for k, v := range src {
			row[k] = s * v
			if w == nil {
				mean[k] += row[k]
			} else {
				mean[k] += w[i] * row[k]
			}
		}
	}
	o.released("mean", 0, o.Gaussian("mean", mean, ratio*z*C, C), mean) // the noisy sum
	for k := range mean {
		mean[k] /= n
	}
	for i := 0; i < d.N; i++ {
		row := x.Row(i)
		for k := range row {
			row[k] -= mean[k]
		}
	}
	// Step 3: full-batch DP-SGD with momentum from W = 0.
	W := make([]float64, M*D)
	vel := make([]float64, M*D)
	zbuf := make([]float64, d.N*M)
	gsum := make([]float64, M*D)
	for t := 0; t < T; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o.released("theta", t, 0, W) // the state the step's gradient is taken at
		scores(x, W, zbuf)
		softmaxResiduals(x, zbuf)
		clear(gsum)
		addClippedGradient(x, zbuf, clip, gsum)
		o.released("gradient", 0, o.Gaussian("gradient", gsum, z*clip, clip), gsum) // now noisy
		for k := range W {
			vel[k] = mom*vel[k] + gsum[k]/n
			W[k] -= lr * vel[k]
		}
		o.progress("dplp step %d/%d", t+1, T)
	}
	// DP-LP rescales every row to norm C itself (Steps 1–2), whatever the
	// flags: the classifier must do the same (it once stored Normalize =
	// false under --no-normalize and scored 0.454 on its own training set).
	res := &Result{W: W, B: make([]float64, M), Prep: Preprocessing{Normalize: true, Scale: C, Center: mean},
		Guarantee: g, NoiseMultiplier: z}
	p.Record("sigma_mean", ratio*z)
	publicN(o, res, d.Examples())
	p.Finish(res)
	return res, nil
}

// softmaxResiduals turns scores into pᵢ − yᵢ in place, p the softmax: the
// gradient of the cross-entropy with respect to the scores (‖p − y‖ ≤ √2).
func softmaxResiduals(u *Data, z []float64) {
	for i := 0; i < u.N; i++ {
		row := z[i*u.M : (i+1)*u.M]
		top := math.Inf(-1)
		for _, v := range row {
			top = math.Max(top, v)
		}
		var s float64
		for j, v := range row {
			row[j] = math.Exp(v - top)
			s += row[j]
		}
		for j := range row {
			row[j] /= s
		}
		row[u.Y[i]] -= 1
	}
}
