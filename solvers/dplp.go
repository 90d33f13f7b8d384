package solvers

import (
	"context"
	"fmt"
	"math"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/internal/bigmem"
)

func init() {
	Register(Method{Name: "dplp", Reads: []string{OptSigma, OptNPublic, OptRunner}, Private: true, Params: []Param{
		{Name: "norm", Rule: Positive, Default: 1, Doc: "the fixed norm C rows are scaled to before private centring"},
		{Name: "clip", Rule: Positive, Default: 1, Doc: "clipping norm of per-example gradients"},
		{Name: "steps", Rule: Whole, Default: 100, Doc: "iterations T"},
		{Name: "lr", Rule: Positive, Default: 2, Doc: "learning rate η"},
		{Name: "momentum", Rule: Fraction01, Default: 0.9, Doc: "SGD momentum"},
		{Name: "sigma_ratio", Rule: Positive, Default: 1.5, Doc: "noise multiplier of the centring mean over the gradients' (σ₁/σ₂)"},
	},
		Summary: "private linear probing with private feature centring (Tang et al. 2024, DP-RandP App. G; Phase II)", Run: fitLP, Stream: fitLPStream})
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
	return linearProbe(ctx, &lpMemory{d: d}, d.M, o)
}

// fitLPStream is DP-LP over a stream of rows in passes (PassLPMean, then a
// PassLPGradient per step), so that a runner computes its sums
// (Options.Remote). Here, rows that fit in the memory budget as float64
// are read once and prepared as they were before DP-LP streamed
// (PrepareRows), and fitted in memory (fitLP): a file of 30,000 × 256
// took 7.3 s so, against 11.6 s in passes.
func fitLPStream(ctx context.Context, rows Rows, m int, o *Options) (*Result, error) {
	if o.Remote == nil {
		if _, ok := rows.(dataRows); ok || rows.Len()*int64(rows.Dim())*8 <= o.memoryBudget() {
			d, err := PrepareRows(rows, m, !o.NoNormalize)
			if err != nil {
				return nil, err
			}
			return fitLP(ctx, d, o)
		}
	}
	return linearProbe(ctx, &lpPasses{rows: rows, o: o, m: m}, m, o)
}

// lpSums are the two sums DP-LP reads its rows through: in memory
// (lpMemory) or in passes (lpPasses), the same values in either.
type lpSums interface {
	// meanSum is Σ w·x′ with x′ = C·x/‖x‖ (w an example's rows' shares).
	meanSum(ctx context.Context, C float64) ([]float64, error)
	// gradientSum is Σ clip_{C_g}((p − y) ⊗ x̃) at W (M×D, no bias), x̃ =
	// x′ − mean, an example's rows' mean gradient clipped.
	gradientSum(ctx context.Context, C float64, mean, W []float64, clip float64) ([]float64, error)
	dim() int
	examples() int64
}

// linearProbe is DP-LP's algorithm over its sums.
func linearProbe(ctx context.Context, src lpSums, M int, o *Options) (*Result, error) {
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
	D := src.dim()
	n, err := o.Rows(src.examples())
	if err != nil {
		return nil, err
	}
	// Steps 1 and 2: x′ = C·x/‖x‖, the noisy mean, x̃ = x′ − m̃.
	mean, err := src.meanSum(ctx, C)
	if err != nil {
		return nil, err
	}
	o.released("mean", 0, o.Gaussian("mean", mean, ratio*z*C, C), mean) // the noisy sum
	for k := range mean {
		mean[k] /= n
	}
	// Step 3: full-batch DP-SGD with momentum from W = 0.
	W := make([]float64, M*D)
	vel := make([]float64, M*D)
	for t := 0; t < T; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o.released("theta", t, 0, W) // the state the step's gradient is taken at
		gsum, err := src.gradientSum(ctx, C, mean, W, clip)
		if err != nil {
			return nil, err
		}
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
	publicN(o, res, int(src.examples()))
	p.Finish(res)
	return res, nil
}

// lpMemory is DP-LP's sums over rows in memory: x′, then x̃, kept.
type lpMemory struct {
	d    *Data
	x    *Data
	zbuf []float64
	gsum []float64
}

func (s *lpMemory) dim() int        { return s.d.D }
func (s *lpMemory) examples() int64 { return int64(s.d.Examples()) }

func (s *lpMemory) meanSum(_ context.Context, C float64) ([]float64, error) {
	d := s.d
	D := d.D
	s.x = &Data{X: bigmem.Float64s(d.N * D), Y: d.Y, N: d.N, D: D, M: d.M, Groups: d.Groups, W: d.W}
	mean := make([]float64, D)
	w := rowWeights(d.Groups, d.W, d.N) // an example's rows weigh their shares
	for i := 0; i < d.N; i++ {
		lpRow(d.Row(i), s.x.Row(i), C, nil)
		if w == nil {
			floatsAdd(mean, s.x.Row(i))
		} else {
			for k, v := range s.x.Row(i) {
				mean[k] += w[i] * v
			}
		}
	}
	return mean, nil
}

func (s *lpMemory) gradientSum(_ context.Context, _ float64, mean, W []float64, clip float64) ([]float64, error) {
	x := s.x
	if s.zbuf == nil {
		for i := 0; i < x.N; i++ {
			row := x.Row(i)
			for k := range row {
				row[k] -= mean[k]
			}
		}
		s.zbuf = make([]float64, x.N*x.M)
		s.gsum = make([]float64, x.M*x.D)
	}
	scores(x, W, s.zbuf)
	softmaxResiduals(x, s.zbuf)
	clear(s.gsum)
	addClippedGradient(x, s.zbuf, clip, s.gsum)
	return s.gsum, nil
}

// lpRow writes x′ = C·x/‖x‖ (0 for x = 0), less mean when given, to out.
func lpRow[T float32 | float64](x []T, out []float64, C float64, mean []float64) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	s := 0.0
	if nrm := math.Sqrt(ss); nrm > 0 {
		s = C / nrm
	}
	for k, v := range x {
		out[k] = s * float64(v)
		if mean != nil {
			out[k] -= mean[k]
		}
	}
}

// lpPasses is DP-LP's sums as passes over rows: here (RunPass), or on a
// runner's workers (Options.Remote).
type lpPasses struct {
	rows Rows
	o    *Options
	m    int
}

func (s *lpPasses) dim() int        { return s.rows.Dim() }
func (s *lpPasses) examples() int64 { return int64(s.o.examples) }

func (s *lpPasses) meanSum(ctx context.Context, C float64) ([]float64, error) {
	return s.o.pass(ctx, s.rows, Pass{Kind: PassLPMean, Scale: C}, s.rows.Dim())
}

func (s *lpPasses) gradientSum(ctx context.Context, C float64, mean, W []float64, clip float64) ([]float64, error) {
	return s.o.pass(ctx, s.rows, Pass{Kind: PassLPGradient, M: s.m, Scale: C, Mean: mean, Theta: W, ClipGrad: clip}, s.m*s.rows.Dim())
}

// lpPass is RunPass of DP-LP's two kinds over rows, in blocks of whole
// examples (each example's rows in one block, as addClippedGradient and
// the weights need).
func lpPass(ctx context.Context, rows Rows, p Pass) ([]float64, error) {
	D := rows.Dim()
	if p.Kind == PassLPGradient && (len(p.Mean) != D || len(p.Theta) != p.M*D) {
		return nil, fmt.Errorf("pass %s: a centre of %d and θ of %d values for rows of %d and %d classes", p.Kind, len(p.Mean), len(p.Theta), D, p.M)
	}
	size := D
	if p.Kind == PassLPGradient {
		size = p.M * D
	}
	sum := make([]float64, size)
	var u Data
	var z []float64
	err := exampleBlocks(ctx, rows, p.M, func(x []float64, y []int32, sizes []int32, w []float64) error {
		n := len(y)
		u = Data{X: growFloats(u.X, n*D), Y: y, N: n, D: D, M: p.M, Groups: sizes, W: w}
		if p.Kind == PassLPMean {
			rw := rowWeights(sizes, w, n)
			for i := 0; i < n; i++ {
				lpRow(x[i*D:(i+1)*D], u.Row(i), p.Scale, nil)
				if rw == nil {
					floatsAdd(sum, u.Row(i))
				} else {
					for k, v := range u.Row(i) {
						sum[k] += rw[i] * v
					}
				}
			}
			return nil
		}
		for i := 0; i < n; i++ {
			lpRow(x[i*D:(i+1)*D], u.Row(i), p.Scale, p.Mean)
		}
		z = growFloats(z, n*p.M)
		scores(&u, p.Theta, z)
		softmaxResiduals(&u, z)
		addClippedGradient(&u, z, p.ClipGrad, sum)
		return nil
	})
	return sum, err
}

// exampleBlocks calls fn with blocks of whole examples (at most
// uBlockRows rows unless one example has more) in float64, with the
// block's example sizes and row weights (nil without grouping), checking
// first that every label is one of m classes (m > 0).
func exampleBlocks(ctx context.Context, rows Rows, m int, fn func(x []float64, y []int32, sizes []int32, w []float64) error) error {
	d0 := rows.Dim()
	walk := newGroupWalk(rows.Groups(), rows.Weights(), int(rows.Len()))
	var offset int64
	block := func(x []float64, y []int32, sizes []int32, w []float64) error {
		for i, c := range y {
			if m > 0 && (c < 0 || int(c) >= m) {
				return fmt.Errorf("row %d: label %d out of range 0..%d", offset+int64(i), c, m-1)
			}
		}
		offset += int64(len(y))
		return fn(x, y, sizes, w)
	}
	if r, ok := rows.(rows64); ok {
		return r.each64(func(x []float64, y []int32) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return splitBlock(walk, x, y, d0, block)
		})
	}
	var buf []float64
	return rows.Each(func(x []float32, y []int32) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return splitBlock(walk, x, y, d0, func(xs []float32, ys []int32, sizes []int32, w []float64) error {
			buf = growFloats(buf, len(xs))
			for i, v := range xs {
				buf[i] = float64(v)
			}
			return block(buf, ys, sizes, w)
		})
	})
}

// growFloats returns b resized to n values, reallocated when too short.
func growFloats(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
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
