package solvers

import (
	"context"
	"fmt"
)

func init() {
	Register(Method{Name: Auto, Reads: []string{OptOptimizer, OptPublic, OptDistance, OptMemory, OptNPublic}, Private: true,
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

// AutoChoice is what auto chose, and why.
type AutoChoice struct {
	Method    string
	Transform string
	// Public: the transform is learned from the public features.
	Public bool
	Why    string
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
func ChooseAuto(n, zStar float64, public bool) AutoChoice {
	c := AutoChoice{Transform: TransformWhiten, Public: public}
	snr := n / zStar
	switch {
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
	c := ChooseAuto(rows, zStar, public)
	if o.Transform.Kind == "" {
		o.Transform.Kind = c.Transform
	}
	switch spec := o.Transform; {
	case !spec.Enabled():
		c.Why += ", no transform"
	case spec.Public != nil:
		c.Why += fmt.Sprintf(", %s transform from the public features (free)", spec.Kind)
	default:
		c.Why += fmt.Sprintf(", %s transform from %g%% of the budget", spec.Kind, 100*spec.share())
	}
	o.auto = c.Why
	o.note("auto: %s", c.Why)
	chosen, err := Lookup(c.Method)
	if err != nil {
		return m, err
	}
	o.method = chosen.Name
	return chosen, CheckParams(chosen.Name, o.Params)
}
