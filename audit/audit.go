// Package audit measures, empirically, a lower bound on the privacy loss of
// dpfeat's real code paths, to set beside what the accountant claims.
//
// The audit builds a small data set D and its neighbour D′ = D plus one
// canary (add/remove adjacency): D's rows are zero in coordinate 0, and the
// canary is the unit vector e₀ with label 0, the example easiest to tell
// apart (for DP-LP, which centres the features, (e₀ − û)/√2). It runs the
// method N times on each with fresh secure noise and computes a statistic
// fixed in advance:
//
//   - the likelihood-ratio statistic of the Gaussian composition at the
//     canary's coordinates of the noisy releases the method reports
//     (Options.Released), Σᵢ (shiftᵢ/σᵢ²)·(valueᵢ − D's part): under D it
//     is N(0, s²) and under D′ N(s², s²) with s² = Σ shiftᵢ²/σᵢ². For DP-LS
//     (G, A₀, b) and DPPL-Mean (class sums) the shifts are exact and the
//     canary moves each release by its whole sensitivity, so a correct
//     mechanism shows exactly its claimed μ. DP-FC, DP-SGD and DP-Newton
//     also report the state θ each step's releases are taken at, so the
//     shift is the canary's exact (clipped) gradient — and Hessian — at θ,
//     on e₀ and on the bias coordinate less what D's rows put there (the
//     adaptive composition's likelihood ratio): DP-SGD's and DP-Newton's
//     canaries reach the whole claim, DP-FC's about 0.9 of it (its later
//     residuals shrink).
//     DP-LP reports its state W too; its canary is (e₀ − û)/√2 with û D's
//     mean direction (lpCanary), whose centred gradient stays clipped, and
//     its shifts are that gradient at each W on every coordinate, and the
//     canary itself in the noisy sum, less D's known parts (lpShift): about
//     0.95 of the claim. Result.MuCanary reports the μ an exact test of the
//     canary would show;
//   - for Poisson-sampled DP-SGD the same shifts on e₀ alone (which rows a
//     step holds is secret), each step's term the log of the mixture's
//     likelihood ratio 1 − q + q·exp(shift·value/σ² − shift²/2σ²); its
//     guarantee is an RDP curve, so the test's error rates are checked
//     against it order by order: D_α(Bern(1 − FNR⁺) ‖ Bern(FPR⁺)) (and the
//     other way round) must not exceed the claimed ε(α), the data-processing
//     inequality for Rényi divergence (Result.RenyiRatio);
//   - for the exponential-mechanism prototypes (dpplpublic, dpplpublick),
//     whether class 0's K prototypes are e₀ and K − 1 anchors, chosen among
//     those and decoys −e₀ (see exponentialCanary); the audit is then on ε
//     (δ = 0);
//   - otherwise, the class-0 weight on coordinate 0 of the released model.
//
// Half of the runs of each side choose the threshold τ that best separates
// them; the other half count false positives (s > τ on D) and false
// negatives (s ≤ τ on D′). Clopper–Pearson upper bounds FPR⁺ and FNR⁺ at
// confidence 1 − α/2 each turn into μ_LB = Φ⁻¹(1 − FPR⁺) − Φ⁻¹(FNR⁺) (a
// μ-GDP mechanism cannot have a test better than this) and
// ε_LB(δ) = max(log((1 − δ − FNR⁺)/FPR⁺), log((1 − δ − FPR⁺)/FNR⁺)). With
// probability at least 1 − α a correct mechanism has μ_LB ≤ μ,
// ε_LB ≤ ε and the Rényi bounds under its curve; the audit fails when a
// bound exceeds the claim.
package audit

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/solvers"

	// The prototype methods register with solvers.
	_ "github.com/dpfeat/dpfeat/prototypes"
)

// Config is one audit.
type Config struct {
	Method         string
	Epsilon, Delta float64
	Params         map[string]float64
	Optimizer      string
	// Runs per side (D and D′); half choose the threshold, half count.
	Runs int
	// Rows, Dim, Classes shape D (defaults 200, 8, 3).
	Rows, Dim, Classes int
	// Alpha is the audit's failure probability on a correct mechanism
	// (default 0.05).
	Alpha float64
	// Noise makes each run's noise source (default: secure). Tests pass a
	// deliberately broken one.
	Noise func() accounting.Noise
	// Progress sees the number of runs done.
	Progress func(done, total int)
	// Transform, when set, audits the feature transform of that kind
	// (solvers.TransformSpec) learned before Method: the statistic reads
	// the transform's releases alone and is held to their own claim
	// (transformShift, transformClaim).
	Transform string
	// Subspace, with Transform whiten, audits the whitening within the
	// top Subspace directions of public basis rows
	// (solvers.TransformSpec.Subspace): rows spread most along the
	// canary's coordinate, so that the subspace keeps the canary whole.
	Subspace int
	// CanaryNorm, when above 1, scales the canary row of D′ to this norm:
	// the neighbour a method sees when rows reach it unnormalised
	// (--no-normalize). Exponential-mechanism methods only, whose
	// utilities must stay bounded whatever the rows' scale.
	CanaryNorm float64
	// Views, when above 1, makes the canary one example of that many rows
	// — its augmented views and mixes, all the canary itself, as a mix of
	// two of them is (withViews) — and D's examples one row each: a method
	// that averages an example's rows before clipping shows one example's
	// shift, one that took the views for examples K times it.
	Views int
	// MixDiff, with Views, adds that many mixups with public images to the
	// canary's example: soft-labelled rows (solvers.Data.W), here mixes of
	// the canary with itself whose soft labels split its own class λ and
	// 1 − λ, so that the example still averages to the canary's one row.
	// The methods that refuse soft labels (the exponential mechanisms')
	// refuse the audit.
	MixDiff int
	// Neighbours, when set, are D and D′ themselves rather than a canary:
	// the rows of two training files (say the extractions, with views, of
	// two sources that differ by one image: the neighbours the guarantee
	// speaks of, from the user's starting point). The statistic is the
	// likelihood ratio of the noisy releases along the shift of their
	// noiseless releases, computed once on each (a one-pass method:
	// dpls, dpplmean).
	Neighbours [2]*solvers.Data
	// ungroup is the broken copy of the tests: the grouping is dropped
	// before the fit, so that every view is clipped and counted as an
	// example.
	ungroup bool
}

// Result is an audit's outcome.
type Result struct {
	Method    string  `json:"method"`
	Runs      int     `json:"runs_per_side"`
	Statistic string  `json:"statistic"`
	Threshold float64 `json:"threshold"`
	FPR       float64 `json:"fpr"`
	FNR       float64 `json:"fnr"`
	FPRUpper  float64 `json:"fpr_upper"`
	FNRUpper  float64 `json:"fnr_upper"`
	MuLB      float64 `json:"mu_lower_bound"`
	EpsLB     float64 `json:"epsilon_lower_bound"`
	// MuClaim is the accountant's μ where it is GDP; EpsClaim its ε.
	MuClaim *float64 `json:"mu_claimed"`
	// MuCanary is the separation an exact test of this canary would show
	// (√ of the mean Σ shift²/σ² over the runs on D′): μ_LB is this less
	// what a finite number of runs loses, and μ_claim − MuCanary is what
	// the canary cannot reach (a canary weaker than the worst case).
	MuCanary *float64 `json:"mu_canary,omitempty"`
	EpsClaim float64  `json:"epsilon_claimed"`
	// RenyiRatio, for a guarantee stated by its RDP curve, is the largest
	// over the orders α of the lower bound on D_α the test's error rates
	// give over the claimed RDP ε(α); RenyiOrder is that α.
	RenyiRatio *float64 `json:"renyi_lower_bound_over_claim,omitempty"`
	RenyiOrder float64  `json:"renyi_order,omitempty"`
	Alpha      float64  `json:"alpha"`
	Pass       bool     `json:"pass"`
}

// noiseless releases the method's noise at scale 0: the released values
// are the statistics themselves.
type noiseless struct{ accounting.Noise }

func (noiseless) GaussianScale() float64 { return 0 }

// noiselessShift runs the method once on each neighbour without noise and
// returns, per release (name#index), the shift of D′'s values from D's
// and D's values.
func noiselessShift(ctx context.Context, c Config, D, D2 *solvers.Data) (shifts, bases map[string][]float64, err error) {
	run := func(d *solvers.Data) (map[string][]float64, error) {
		out := map[string][]float64{}
		params := map[string]float64{}
		for k, v := range c.Params {
			params[k] = v
		}
		o := solvers.Options{Params: params, Privacy: accounting.ReleaseOptions{Epsilon: c.Epsilon, Delta: c.Delta, Noise: noiseless{accounting.SecureNoise()},
			Released: func(name string, index int, _ float64, values []float64) {
				out[fmt.Sprint(name, "#", index)] = append([]float64(nil), values...)
			}}}
		if _, err := solvers.Fit(ctx, c.Method, d, o); err != nil {
			return nil, err
		}
		return out, nil
	}
	if bases, err = run(D); err != nil {
		return nil, nil, fmt.Errorf("%s on D: %w", c.Method, err)
	}
	other, err := run(D2)
	if err != nil {
		return nil, nil, fmt.Errorf("%s on D′: %w", c.Method, err)
	}
	shifts = map[string][]float64{}
	for k, b := range bases {
		o := other[k]
		if len(o) != len(b) {
			return nil, nil, fmt.Errorf("release %s has %d values on D and %d on D′", k, len(b), len(o))
		}
		sh := make([]float64, len(b))
		for i := range b {
			sh[i] = o[i] - b[i]
		}
		shifts[k] = sh
	}
	return shifts, bases, nil
}

// Audited lists the methods the audit runs.
var Audited = []string{"dpls", "dpplmean", "dpfc", "dpnewton", "dpsgd", "dplp", "dpplpublic", "dpplpublick"}

// Run audits one method.
func Run(ctx context.Context, c Config) (Result, error) {
	if c.Runs < 20 {
		return Result{}, fmt.Errorf("an audit needs at least 20 runs per side, got %d", c.Runs)
	}
	if c.Rows == 0 {
		c.Rows, c.Dim, c.Classes = 200, 8, 3
	}
	if c.Alpha == 0 {
		c.Alpha = 0.05
	}
	if c.Noise == nil {
		c.Noise = accounting.SecureNoise
	}
	m, err := solvers.Lookup(c.Method)
	if err != nil {
		return Result{}, err
	}
	if !m.Private {
		return Result{}, fmt.Errorf("%s is not private: nothing to audit (audited: %v)", c.Method, Audited)
	}
	q := 1.0 // the canary's chance to be in a step (Poisson-sampled DP-SGD)
	if b := c.Params["batch"]; c.Method == "dpsgd" && b > 0 && b < float64(c.Rows+1) {
		q = b / float64(c.Rows+1)
	}
	D, D2 := dataset(c.Rows, c.Dim, c.Classes, q < 1)
	var shifts, bases map[string][]float64
	if c.Neighbours[0] != nil {
		if c.Method != "dpls" && c.Method != "dpplmean" {
			return Result{}, fmt.Errorf("an audit of two neighbouring files runs a one-pass method (dpls, dpplmean), not %s", c.Method)
		}
		D, D2 = c.Neighbours[0], c.Neighbours[1]
		var err error
		if shifts, bases, err = noiselessShift(ctx, c, D, D2); err != nil {
			return Result{}, err
		}
	}
	if c.CanaryNorm > 1 {
		if !m.Pure {
			return Result{}, fmt.Errorf("a canary of norm %g audits the exponential-mechanism methods (dpplpublic, dpplpublick); %s clips or normalises rows before its Gaussian releases", c.CanaryNorm, c.Method)
		}
		D2.X[0] = c.CanaryNorm // the canary e₀, unnormalised
	}
	if c.Method == "dplp" {
		copy(D2.Row(0), lpCanary(D)) // the canary is D2's first row
	}
	if c.Views > 1 || c.MixDiff > 0 {
		D, D2 = withViews(D, 1, 0), withViews(D2, max(c.Views, 1), c.MixDiff)
	}
	stats := releaseStats(c.Method)
	res := Result{Method: c.Method, Runs: c.Runs, Alpha: c.Alpha, Statistic: "class-0 weight on the canary's coordinate"}
	if stats != nil {
		res.Statistic = "likelihood ratio of the noisy releases at the canary's coordinates, exact shifts"
	}
	var public, basis *solvers.Data
	if m.Pure {
		// k prototypes per class (dpplpublick; dpplpublic chooses one)
		public = exponentialCanary(D, c.Epsilon, int(setting(c.Method, "k", c.Params)))
		res.Statistic = "whether class 0's prototypes are the canary's direction and the anchors"
	}
	sigma := 0.0 // after the first run: its calibrated multiplier, reused
	adaptive := adaptiveShift(c.Method, c.Dim, c.Classes, c.Params, D, q)
	if c.Transform != "" {
		if m.Pure {
			return Result{}, fmt.Errorf("%s is pure ε-DP: its transform can only come from public data, which the audit has nothing to test in", c.Method)
		}
		var v *mat.Dense
		if c.Subspace > 0 {
			if c.Transform != solvers.TransformWhiten || c.Subspace > c.Dim {
				return Result{}, fmt.Errorf("a basis subspace audits a whiten transform within at most the %d features' directions, not %s within %d", c.Dim, c.Transform, c.Subspace)
			}
			basis = subspaceBasis(c.Dim, c.Subspace)
			if v, err = solvers.SubspaceDirections(ctx, basis, c.Subspace); err != nil {
				return Result{}, err
			}
		}
		adaptive, stats = transformShift(D, v), nil
	}
	if adaptive != nil {
		res.Statistic = "likelihood ratio of the noisy releases at the canary's coordinates, shifts from each step's state"
	}
	if shifts != nil {
		adaptive, stats = nil, nil
		res.Statistic = "likelihood ratio of the noisy releases along the neighbours' noiseless shift"
	}
	// one runs the method once on d: the statistic, and the separation²
	// Σ shift²/σ² of the Gaussian releases it reads (the μ² an exact test
	// of this canary would show, for full-batch Gaussian mechanisms).
	one := func(d *solvers.Data) (float64, float64, accounting.Guarantee, error) {
		var s, signal float64
		var theta []float64
		params := map[string]float64{}
		for k, v := range c.Params {
			params[k] = v
		}
		o := solvers.Options{Params: params, Optimizer: c.Optimizer, Public: public, Transform: solvers.TransformSpec{Kind: c.Transform}}
		if basis != nil {
			o.Transform.Basis, o.Transform.Subspace, o.Transform.Dims = basis, true, c.Subspace
		}
		o.Privacy = accounting.ReleaseOptions{Epsilon: c.Epsilon, Delta: c.Delta, Noise: c.Noise(),
			Released: func(name string, index int, std float64, values []float64) {
				if shifts != nil {
					key := fmt.Sprint(name, "#", index)
					sh, base := shifts[key], bases[key]
					for k, v := range values {
						if k < len(sh) && sh[k] != 0 {
							s += sh[k] / (std * std) * (v - base[k])
							signal += sh[k] * sh[k] / (std * std)
						}
					}
					return
				}
				if adaptive != nil {
					if name == "theta" {
						theta = append(theta[:0], values...)
						return
					}
					var lin, sq float64 // Σ shift·value/σ², Σ shift²/σ²
					for _, e := range adaptive(name, index, theta, values) {
						v := std*std + e.extra
						if e.offDiag {
							v = std*std/2 + e.extra
						}
						lin += e.shift / v * (values[e.at] - e.base)
						sq += e.shift * e.shift / v
					}
					signal += sq
					if q < 1 {
						// Poisson sampling: the step holds the canary with
						// probability q, so its likelihood ratio is the
						// mixture's, 1 − q + q·exp(lin − sq/2).
						s += math.Log1p(q * math.Expm1(lin-sq/2))
					} else {
						s += lin
					}
					return
				}
				for _, st := range stats[name] {
					if index == st.index {
						s += st.shift / (std * std) * values[st.at]
						signal += st.shift * st.shift / (std * std)
					}
				}
			}}
		if sigma > 0 {
			o.Privacy.Sigma = sigma // the same mechanism, without calibrating it again
		}
		if c.ungroup {
			ungrouped := *d
			ungrouped.Groups, ungrouped.W = nil, nil
			d = &ungrouped
		}
		r, err := solvers.Fit(ctx, c.Method, d, o)
		if err != nil {
			return 0, 0, accounting.Guarantee{}, err
		}
		if !m.Pure && sigma == 0 && c.Transform == "" {
			// (a transform's noise is set from the target, not from σ)
			sigma = r.NoiseMultiplier
		}
		switch {
		case m.Pure:
			// class 0's K prototypes: e₀ and the anchors, no decoy
			hit, decoy := false, false
			for k := 0; k < max(1, r.PerClass); k++ {
				hit = hit || r.Prototypes[k*c.Dim] > 0.5
				decoy = decoy || r.Prototypes[k*c.Dim] < -0.5
			}
			s = 0
			if hit && !decoy {
				s = 1
			}
		case stats == nil && adaptive == nil && shifts == nil:
			s = r.W[0]
		}
		return s, signal, r.Guarantee, nil
	}
	var s0, s1 []float64
	var g accounting.Guarantee
	var signal float64
	for i := 0; i < c.Runs; i++ {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		a, _, _, err := one(D)
		if err != nil {
			return Result{}, fmt.Errorf("%s on D: %w", c.Method, err)
		}
		b, sig, gb, err := one(D2)
		if err != nil {
			return Result{}, fmt.Errorf("%s on D′: %w", c.Method, err)
		}
		s0, s1, g = append(s0, a), append(s1, b), gb
		signal += sig
		if c.Progress != nil {
			c.Progress(i+1, c.Runs)
		}
	}
	if c.Transform != "" {
		res.Statistic = "likelihood ratio of the " + c.Transform + " transform's releases at the canary's coordinates"
		if c.Subspace > 0 {
			res.Statistic = fmt.Sprintf("likelihood ratio of the whiten transform's releases within a basis's top %d directions at the canary's coordinates", c.Subspace)
		}
		var err error
		if g, err = transformClaim(g); err != nil {
			return Result{}, err
		}
	}
	h := c.Runs / 2
	// A guarantee stated by its RDP curve (Poisson-sampled DP-SGD) is
	// checked order by order: the test's outcome is a post-processing of
	// the output, so D_α(Bern(1 − FNR) ‖ Bern(FPR)) ≤ ε(α), and so with the
	// roles swapped. Other guarantees are checked on μ (GDP) and ε.
	score := func(fpU, fnU float64) float64 { return normQuantile(1-fpU) - normQuantile(fnU) }
	var curve []float64
	if g.Mu == nil && !m.Pure {
		var err error
		if curve, err = accounting.RDPCurve(g.Mechanisms, accounting.DefaultOrders); err != nil {
			return Result{}, fmt.Errorf("the RDP curve of %s's guarantee: %w", c.Method, err)
		}
		score = func(fpU, fnU float64) float64 {
			r, _ := renyiRatio(fpU, fnU, accounting.DefaultOrders, curve)
			return r
		}
	}
	tau := bestThreshold(s0[:h], s1[:h], c.Alpha/2, score)
	fp, fn := countErrors(s0[h:], s1[h:], tau)
	n := c.Runs - h
	res.Threshold, res.FPR, res.FNR = tau, float64(fp)/float64(n), float64(fn)/float64(n)
	res.FPRUpper, res.FNRUpper = clopperPearsonUpper(fp, n, c.Alpha/2), clopperPearsonUpper(fn, n, c.Alpha/2)
	res.MuLB = math.Max(0, normQuantile(1-res.FPRUpper)-normQuantile(res.FNRUpper))
	res.EpsLB = epsilonLB(res.FPRUpper, res.FNRUpper, c.Delta)
	res.EpsClaim = float64(g.Epsilon)
	if g.Mu != nil {
		mc := float64(*g.Mu)
		res.MuClaim = &mc
	}
	if signal > 0 && q == 1 && !m.Pure {
		mc := math.Sqrt(signal / float64(c.Runs))
		res.MuCanary = &mc
	}
	renyiOK := true
	if curve != nil {
		r, order := renyiRatio(res.FPRUpper, res.FNRUpper, accounting.DefaultOrders, curve)
		res.RenyiRatio, res.RenyiOrder = &r, order
		renyiOK = r <= 1
	}
	res.Pass = res.EpsLB <= res.EpsClaim && (g.Mu == nil || res.MuLB <= float64(*g.Mu)) && renyiOK
	return res, nil
}
