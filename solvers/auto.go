package solvers

import (
	"context"
	"fmt"
	"slices"
)

func init() {
	Register(Method{Name: Auto, Reads: []string{OptOptimizer, OptPublic, OptDistance, OptMemory, OptNPublic, OptRunner}, Private: true,
		Summary: "chooses the method, feature transform and budget split from n, ε, δ and whether public features are given (the recommended first method)",
		Run: func(context.Context, *Data, *Options) (*Result, error) {
			panic("solvers: auto is resolved by Fit before it runs")
		}})
}

// Auto is the method that chooses a method (ChooseAuto).
const Auto = "auto"

// AutoThreshold is the signal-to-noise n·μ (n rows, μ the GDP parameter
// of the whole target: 1/z* for one Gaussian release) from which auto
// chooses DP-FC over DP-SGD; below AutoFloor it chooses DPPL-Mean.
const (
	AutoThreshold = 4000
	AutoFloor     = 100
)

// AutoBasisThreshold is the n·μ below which auto, given basis features
// (TransformSpec.Basis), fits DPPL-Mean on the basis's top principal
// directions (basisDims).
const AutoBasisThreshold = 180

// basisDims is how many of the basis's directions auto keeps: 32 (16
// below n·μ = AutoFloor), at most D/4, at least 8 (or D). Measured with
// 2 seeds over the 10 feature sets of bench/results/shift-small.md: 16
// beat 32 in 7 of 10 cells at n·μ ≈ 50; at n·μ ≈ 155 the two were
// within 0.6 points on average (32 ahead for ResNet's D = 256, 16 for
// ViT's 128); at n·μ ≈ 195 (n ≈ 6,000, ε = 0.1) 32 was ahead for both,
// and 16 lost 0.65 points to auto without a basis in one ViT cell.
func basisDims(d int, snr float64) int {
	k := 32
	if snr < AutoFloor {
		k = 16
	}
	return max(min(k, d/4), min(8, d))
}

// AutoChoice is what auto chose, and why.
type AutoChoice struct {
	Method    string
	Transform string
	// Dims caps the transform's directions (0: the kind's default).
	Dims int
	// Public: the transform is learned from the public features.
	Public bool
	// Basis: the transform's directions are the basis features'.
	Basis bool
	Why   string
}

// ChooseAuto is auto's rule. It reads public quantities only — n (the
// true count, listed as public, or the released n̂), the target's μ (from
// ε and δ, or the fixed noise multiplier) and whether public features
// are given — never the data, so that neighbouring datasets get the
// same choice unless n itself is public. It was derived from bench/shift.sh
// (bench/RESULTS.md, "Shifted features" and "auto's rule"): five shifts
// of Fashion-MNIST and an in-distribution reference through two encoders
// (D = 128 and 256, M = 10), n ∈ {600, 6000, 30000}, ε ∈ {0.01, 0.1, 1, 8}:
//
//   - below n·μ = AutoFloor (n = 600 at ε = 0.1) no trained model beat
//     chance on shifted features and a transform's share only added
//     noise: DPPL-Mean (one release of the class sums, no transform),
//     0.10–0.49 where auto's DP-SGD stayed at 0.10;
//   - else a whitening transform (TransformWhiten): centring and
//     regularised whitening of the renormalised features gained up to 18
//     points on shifted features and lost at most 0.3 in distribution
//     at n·μ ≥ 100; from public features when given (free), else from
//     20% of the budget;
//   - DP-SGD (Adam, full batch, its defaults) below n·μ = AutoThreshold, where its
//     many cheap steps beat DP-FC's few full-batch ones (up to 11 points
//     at n = 6000, ε = 0.1); DP-FC from there, where its preconditioner
//     pays (0.5 to 3 points).
//
// With basis features (basisDim > 0: their dimension, TransformSpec.Basis,
// public rows such as the encoder's own training data) and no public
// features, below n·μ = AutoBasisThreshold it fits DPPL-Mean on the
// basis's top basisDims principal directions, centred on the private
// mean (5% of the budget). Measured (#41) with bench/shift.sh basis
// (bench/results/shift-basis.md: five shifts and in-distribution
// Fashion-MNIST through both encoders, the basis the encoder's 30,000
// public training rows, medians of 5 seeds): at n ≈ 600, ε = 1
// (n·μ 155–169) better than auto without a basis in all 12 cells, and
// at ε = 0.3 (n·μ ≈ 53) in all 12, by up to 27 points; at n ≈ 6,000,
// ε = 0.1 (n·μ ≈ 195) up to 4.8 points better in 7 cells but 0.5–1.0
// worse in 3, so the threshold sits between 169 and 195. Above it auto
// keeps its rule (DPPL-Mean on the basis was 4–6 points worse at
// n·μ ≈ 540 and 1000 in bench/results/shift-small.md). The choice reads
// the basis's dimension, not its rows' values.
func ChooseAuto(n, zStar float64, public bool, basisDim int) AutoChoice {
	c := AutoChoice{Transform: TransformWhiten, Public: public}
	snr := n / zStar
	switch {
	case basisDim > 0 && !public && snr < AutoBasisThreshold:
		c.Method, c.Transform, c.Dims, c.Basis = "dpplmean", TransformPCA, basisDims(basisDim, snr), true
		c.Why = fmt.Sprintf("n·μ = %.0f < %d with basis features: dpplmean's noisy class means on %d of their principal directions", snr, AutoBasisThreshold, c.Dims)
	case snr < AutoFloor:
		c.Method, c.Transform = "dpplmean", TransformNone
		c.Why = fmt.Sprintf("n·μ = %.0f < %d: too little signal for a trained model; dpplmean's noisy class means", snr, AutoFloor)
	case snr < AutoThreshold:
		c.Method = "dpsgd"
		c.Why = fmt.Sprintf("n·μ = %.0f < %d: dpsgd", snr, AutoThreshold)
	default:
		c.Method = "dpfc"
		c.Why = fmt.Sprintf("n·μ = %.0f ≥ %d: dpfc", snr, AutoThreshold)
	}
	return c
}

// resolveAuto replaces auto by its choice for n training rows: the
// method, and the transform unless the caller asked for one. With a
// private n (Options.Privacy.PrivateN) n̂ is released here, first.
func resolveAuto(m Method, n int64, o *Options) (Method, error) {
	if m.Name != Auto {
		return m, nil
	}
	rows, err := o.Rows(n)
	if err != nil {
		return m, err
	}
	zStar, err := o.rel.WholeTarget()
	if err != nil {
		return m, err
	}
	public := o.Transform.Public != nil
	basisDim := 0
	if o.Transform.Basis != nil {
		basisDim = o.Transform.Basis.Dim()
	}
	c := ChooseAuto(rows, zStar, public, basisDim)
	if o.Transform.Kind == "" {
		o.Transform.Kind = c.Transform
		if o.Transform.Dims == 0 {
			o.Transform.Dims = c.Dims
		}
		if !c.Basis {
			o.Transform.Basis = nil // auto's own transform uses the basis only where it chose to
		}
	}
	switch spec := o.Transform; {
	case !spec.Enabled():
		c.Why += ", no transform"
	case spec.Public != nil:
		c.Why += fmt.Sprintf(", %s transform from the public features (free)", spec.Kind)
	case spec.basis():
		c.Why += fmt.Sprintf(", %s transform: directions from the basis features (free), the mean from %g%% of the budget", spec.Kind, 100*spec.share())
	default:
		c.Why += fmt.Sprintf(", %s transform from %g%% of the budget", spec.Kind, 100*spec.share())
	}
	o.auto = c.Why
	o.note("auto: %s", c.Why)
	chosen, err := Lookup(c.Method)
	if err != nil {
		return m, err
	}
	if o.Remote != nil && !slices.Contains(chosen.Reads, OptRunner) {
		panic("solvers: auto chose " + chosen.Name + ", which does not run on a runner") // every choice does
	}
	o.method = chosen.Name
	return chosen, CheckParams(chosen.Name, o.Params)
}
