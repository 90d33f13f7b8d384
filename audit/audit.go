// Package audit measures, empirically, a lower bound on the privacy loss of
// dpfeat's real code paths, to set beside what the accountant claims.
//
// The audit builds a small data set D and its neighbour D′ = D plus one
// canary (add/remove adjacency): D's rows are zero in coordinate 0, and the
// canary is the unit vector e₀ with label 0, the example easiest to tell
// apart. It runs the method N times on each with fresh secure noise and
// computes a statistic fixed in advance:
//
//   - the likelihood-ratio statistic of the Gaussian composition at the
//     canary's coordinates of the noisy releases the method reports
//     (Options.Released), Σᵢ (shiftᵢ/σᵢ²)·valueᵢ: under D it is N(0, s²)
//     and under D′ N(s², s²) with s² = Σ shiftᵢ²/σᵢ². For DP-LS (G, A₀,
//     b) and DPPL-Mean (class sums) the shifts are exact and the canary
//     moves each release by its whole sensitivity, so a correct mechanism
//     shows exactly its claimed μ. DP-FC, DP-SGD and DP-Newton also report
//     the state θ each step's releases are taken at, so the shift is the
//     canary's exact (clipped) gradient — and Hessian — at θ, on the
//     coordinate no row of D touches (the adaptive composition's
//     likelihood ratio); it is a fraction of the sensitivity, so a correct
//     mechanism shows less than its claim. DP-LP's shifts are its canary's
//     gradient at the start, and its mean;
//   - for the exponential-mechanism prototypes (dpplpublic, dpplpublick),
//     whether class 0's prototype is e₀ among e₀ and e^ε (20 to 500)
//     copies of −e₀ in the public set (the canary raises e₀'s utility by the whole clipping
//     range and theirs by nothing); the audit is then on ε (δ = 0). For
//     DPPL-PublicK this canary is weak: the joint top-K mechanism weighs a
//     set by its worst member's utility relative to the K-th, and e₀ ranks
//     first on D and D′ alike, so its chance hardly moves;
//   - otherwise, the class-0 weight on coordinate 0 of the released model.
//
// Half of the runs of each side choose the threshold τ that best separates
// them; the other half count false positives (s > τ on D) and false
// negatives (s ≤ τ on D′). Clopper–Pearson upper bounds FPR⁺ and FNR⁺ at
// confidence 1 − α/2 each turn into μ_LB = Φ⁻¹(1 − FPR⁺) − Φ⁻¹(FNR⁺) (a
// μ-GDP mechanism cannot have a test better than this) and
// ε_LB(δ) = max(log((1 − δ − FNR⁺)/FPR⁺), log((1 − δ − FPR⁺)/FNR⁺)). With
// probability at least 1 − α a correct mechanism has μ_LB ≤ μ and
// ε_LB ≤ ε; the audit fails when the bound exceeds the claim.
package audit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"

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
	MuClaim  *float64 `json:"mu_claimed"`
	EpsClaim float64  `json:"epsilon_claimed"`
	Alpha    float64  `json:"alpha"`
	Pass     bool     `json:"pass"`
}

// Audited lists the methods the audit runs.
var Audited = []string{"dpls", "dpplmean", "dpfc", "dpnewton", "dpsgd", "dplp", "dpplpublic", "dpplpublick"}

// releaseStats are the releases whose canary coordinates the
// likelihood-ratio statistic reads: release name → entries (the class
// index the method reports it with, the flat index of the canary's
// coordinate, and the shift the canary makes there). For the iterative
// methods the shift is the canary's gradient at the start (it moves
// little along e₀, which only the canary and the noise touch); with
// features u = [x, C]/√2 the canary's u₀ is 1/√2.
type releaseStat struct {
	index, at int
	shift     float64
}

// adaptiveShift returns, for the methods that report their state θ before
// each step (DP-FC, DP-SGD, DP-Newton), the exact shift the canary makes
// in a release taken at θ, at each flat index of the canary's coordinate
// 0 — where no row of D contributes, so the release there is the canary's
// contribution plus noise: the statistic is then the likelihood ratio of
// the adaptive composition (θ is known to whoever sees the releases).
// Features are u = [x, C]/√2 (DP-FC: C = clip_cov; DP-SGD and DP-Newton: the
// features' clip 1, resp. clip), the canary's x = e₀ scaled to C·(1 − 1e-6)
// as the methods clip.
func adaptiveShift(method string, d, m int, params map[string]float64, rows *solvers.Data) func(release string, index int, theta []float64) map[int]float64 {
	get := func(name string, def float64) float64 {
		if v, ok := params[name]; ok {
			return v
		}
		return def
	}
	dd := d + 1
	var cu, cg float64 // the features' clip, the gradients' clip (0: none)
	switch method {
	case "dpfc":
		cu, cg = get("clip_cov", 1), get("clip_grad", 1)
	case "dpsgd":
		cu, cg = 1, get("clip", 1)
	case "dpnewton":
		cu = get("clip", 1)
	default:
		return nil
	}
	margin := 1 - 1e-6
	u0, ub := cu*margin/math.Sqrt2, cu/math.Sqrt2
	sig := func(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
	// residuals of the one-vs-all sigmoid loss of the canary (label 0) at θ
	resid := func(theta []float64) []float64 {
		r := make([]float64, m)
		for j := range r {
			r[j] = sig(theta[j*dd]*u0 + theta[j*dd+d]*ub)
		}
		r[0] -= 1
		return r
	}
	// baseline is what D's rows put on the bias coordinate of class j's
	// gradient at θ (DP-Newton: unclipped), which whoever knows D and θ
	// can subtract; the canary then adds r_j·ub there too.
	baseline := func(theta []float64, j int) float64 {
		var s float64
		for i := 0; i < rows.N; i++ {
			x := rows.Row(i)
			var nrm float64
			for _, v := range x {
				nrm += v * v
			}
			scale := 1.0
			if nrm = math.Sqrt(nrm); nrm > 0 {
				scale = 1 / nrm
				if cu*margin < 1 {
					scale *= cu * margin
				}
			}
			z := theta[j*dd+d] * ub
			for k, v := range x {
				z += theta[j*dd+k] * v * scale / math.Sqrt2
			}
			p := sig(z)
			if int(rows.Y[i]) == j {
				p -= 1
			}
			s += p * ub
		}
		return s
	}
	return func(release string, index int, theta []float64) map[int]float64 {
		if release == "covariance" { // DP-FC: row 0 of uuᵀ is the canary's alone
			return map[int]float64{0: u0 * u0, d: u0 * ub}
		}
		if len(theta) != m*dd {
			return nil
		}
		r := resid(theta)
		out := map[int]float64{}
		switch {
		case method == "dpnewton" && release == "gradient":
			out[0] = r[index] * u0
			out[-1] = baseline(theta, index) // subtracted at the bias coordinate (see Run)
			out[d] = r[index] * ub
		case method == "dpnewton" && release == "hessian":
			p := r[index]
			if index == 0 {
				p += 1
			}
			// σ'·uuᵀ at (0, 0) and at (0, bias) — D's rows add nothing
			// to either, being zero in coordinate 0.
			out[0] = p * (1 - p) * u0 * u0
			out[d] = p * (1 - p) * u0 * ub
		case release == "gradient":
			// jointly clipped over the classes: ‖r‖·‖u‖ ≤ C_g
			var rr float64
			for _, v := range r {
				rr += v * v
			}
			f := 1.0
			if n := math.Sqrt(rr) * math.Sqrt(u0*u0+ub*ub); n > cg*margin {
				f = cg * margin / n
			}
			for j, v := range r {
				out[j*dd] = f * v * u0
			}
		}
		return out
	}
}

func releaseStats(method string, d, m int) map[string][]releaseStat {
	u0 := 1 / math.Sqrt2
	perClass := func(width int, first, others float64) []releaseStat {
		out := []releaseStat{{0, 0, first}}
		for j := 1; j < m; j++ {
			out = append(out, releaseStat{0, j * width, others})
		}
		return out
	}
	switch method {
	case "dpls":
		// G and A₀ gain e₀e₀ᵀ (entry 0), b₀ gains e₀ (entry 0 of class 0).
		return map[string][]releaseStat{"G": {{0, 0, 1}}, "A": {{0, 0, 1}}, "b": {{0, 0, 1}}}
	case "dpplmean":
		return map[string][]releaseStat{"sums": {{0, 0, 1}}}
	case "dpfc", "dpsgd":
		// Bias −10: σ ≈ 0, so the canary's residual is −1 for its class
		// and 0 for the others; its gradient on (class 0, e₀) is −u₀.
		return map[string][]releaseStat{"gradient": {{0, 0, -u0}}}
	case "dplp":
		// Scaled to norm 1 and centred (the mean moves by 1/n), at W = 0
		// the softmax residual is 1/M − 1 for class 0 and 1/M for others.
		return map[string][]releaseStat{"mean": {{0, 0, 1}}, "gradient": perClass(d, 1/float64(m)-1, 1/float64(m))}
	case "dpnewton":
		// θ = 0: residual σ(0) − 1 = −½ for class 0, +½ for the others;
		// every class's Hessian gains σ'(0)·u₀² = ¼·½ at entry 0.
		var g, h []releaseStat
		for j := 0; j < m; j++ {
			r := 0.5
			if j == 0 {
				r = -0.5
			}
			g = append(g, releaseStat{j, 0, r * u0})
			h = append(h, releaseStat{j, 0, 0.25 * u0 * u0})
		}
		return map[string][]releaseStat{"gradient": g, "hessian": h}
	}
	return nil
}

// dataset returns D (rows zero in coordinate 0, labels balanced) and D′
// (D plus the canary e₀ with label 0), unit-normalised as Prepare would.
func dataset(n, d, m int) (*solvers.Data, *solvers.Data) {
	r := rand.New(rand.NewPCG(11, 13))
	x := make([]float64, n*d)
	y := make([]int32, n)
	for i := 0; i < n; i++ {
		y[i] = int32(i * m / n)
		row := x[i*d : (i+1)*d]
		var s float64
		for k := 1; k < d; k++ {
			row[k] = r.NormFloat64() + float64((int(y[i])+k)%m)
			s += row[k] * row[k]
		}
		for k := 1; k < d; k++ {
			row[k] /= math.Sqrt(s)
		}
	}
	D := &solvers.Data{X: x, Y: y, N: n, D: d, M: m}
	// The canary goes first: rows stay grouped by class (Prepare's order).
	x2 := append(append(make([]float64, 0, (n+1)*d), 1), make([]float64, d-1)...)
	x2 = append(x2, x...)
	y2 := append([]int32{0}, y...)
	return D, &solvers.Data{X: x2, Y: y2, N: n + 1, D: d, M: m}
}

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
	D, D2 := dataset(c.Rows, c.Dim, c.Classes)
	stats := releaseStats(c.Method, c.Dim, c.Classes)
	res := Result{Method: c.Method, Runs: c.Runs, Alpha: c.Alpha, Statistic: "class-0 weight on the canary's coordinate"}
	if stats != nil {
		res.Statistic = "likelihood ratio of the noisy releases at the canary's coordinates"
	}
	var public *solvers.Data
	if m.Pure {
		// The exponential mechanism picks class 0's prototype among e₀ and
		// K copies of −e₀: on D all score alike (D is zero along e₀); the
		// canary raises e₀'s utility by the whole clipping range and the
		// others' by nothing. The statistic: was e₀ chosen.
		// e^ε decoys (20 to 500) let the canary's log-ratio reach ε.
		k := int(math.Min(500, math.Max(20, math.Round(math.Exp(c.Epsilon)))))
		public = &solvers.Data{X: make([]float64, (k+1)*c.Dim), Y: make([]int32, k+1), N: k + 1, D: c.Dim, M: c.Classes}
		public.X[0] = 1
		for i := 1; i <= k; i++ {
			public.X[i*c.Dim] = -1
			public.Y[i] = -1
		}
		public.Y[0] = -1
		res.Statistic = "whether class 0's prototype is the canary's direction"
	}
	sigma := 0.0 // after the first run: its calibrated multiplier, reused
	adaptive := adaptiveShift(c.Method, c.Dim, c.Classes, c.Params, D)
	q := 1.0 // the canary's chance to be in a step (Poisson-sampled DP-SGD)
	if b := c.Params["batch"]; c.Method == "dpsgd" && b > 0 && b < float64(c.Rows+1) {
		q = b / float64(c.Rows+1)
	}
	if adaptive != nil {
		res.Statistic = "likelihood ratio of the noisy releases at the canary's coordinates, shifts from each step's state"
	}
	one := func(d *solvers.Data) (float64, accounting.Guarantee, error) {
		var s float64
		var theta []float64
		params := map[string]float64{}
		for k, v := range c.Params {
			params[k] = v
		}
		o := solvers.Options{Epsilon: c.Epsilon, Delta: c.Delta, Params: params, Optimizer: c.Optimizer, Noise: c.Noise(), Public: public,
			Released: func(name string, index int, std float64, values []float64) {
				if adaptive != nil {
					if name == "theta" {
						theta = append(theta[:0], values...)
						return
					}
					sh := adaptive(name, index, theta)
					base, hasBase := sh[-1]
					var lin, sq float64 // Σ shift·value/σ², Σ shift²/σ²
					for at, shift := range sh {
						if at < 0 {
							continue
						}
						v := values[at]
						if hasBase && at == c.Dim {
							v -= base // D's known contribution on the bias coordinate
						}
						lin += shift / (std * std) * v
						sq += shift * shift / (std * std)
					}
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
					}
				}
			}}
		if sigma > 0 {
			o.Sigma = sigma // the same mechanism, without calibrating it again
		}
		r, err := solvers.Fit(ctx, c.Method, d, o)
		if err != nil {
			return 0, accounting.Guarantee{}, err
		}
		if !m.Pure && sigma == 0 {
			sigma = r.NoiseMultiplier
		}
		switch {
		case m.Pure:
			s = 0
			for k := 0; k < max(1, r.PerClass); k++ { // class 0's K prototypes
				if r.Prototypes[k*c.Dim] > 0.5 {
					s = 1
				}
			}
		case stats == nil:
			s = r.W[0]
		}
		return s, r.Guarantee, nil
	}
	var s0, s1 []float64
	var g accounting.Guarantee
	for i := 0; i < c.Runs; i++ {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		a, _, err := one(D)
		if err != nil {
			return Result{}, fmt.Errorf("%s on D: %w", c.Method, err)
		}
		b, gb, err := one(D2)
		if err != nil {
			return Result{}, fmt.Errorf("%s on D′: %w", c.Method, err)
		}
		s0, s1, g = append(s0, a), append(s1, b), gb
		if c.Progress != nil {
			c.Progress(i+1, c.Runs)
		}
	}
	h := c.Runs / 2
	tau := bestThreshold(s0[:h], s1[:h], c.Alpha/2)
	fp, fn := 0, 0
	for _, v := range s0[h:] {
		if v > tau {
			fp++
		}
	}
	for _, v := range s1[h:] {
		if v <= tau {
			fn++
		}
	}
	n := c.Runs - h
	res.Threshold, res.FPR, res.FNR = tau, float64(fp)/float64(n), float64(fn)/float64(n)
	res.FPRUpper, res.FNRUpper = clopperPearsonUpper(fp, n, c.Alpha/2), clopperPearsonUpper(fn, n, c.Alpha/2)
	res.MuLB = math.Max(0, normQuantile(1-res.FPRUpper)-normQuantile(res.FNRUpper))
	res.EpsLB = epsilonLB(res.FPRUpper, res.FNRUpper, c.Delta)
	res.EpsClaim = float64(g.Epsilon)
	res.MuClaim = g.Mu
	res.Pass = res.EpsLB <= res.EpsClaim && (g.Mu == nil || res.MuLB <= *g.Mu)
	return res, nil
}

// bestThreshold picks τ maximising the bound the evaluation half will
// compute, Φ⁻¹(1 − FPR⁺) − Φ⁻¹(FNR⁺) with Clopper–Pearson upper bounds, on
// the selection half: extreme thresholds, where one rate is tiny and its
// bound loose, lose to balanced ones.
func bestThreshold(s0, s1 []float64, alpha float64) float64 {
	cand := append(append([]float64(nil), s0...), s1...)
	sort.Float64s(cand)
	best, bestT := math.Inf(-1), cand[len(cand)/2]
	for _, t := range cand {
		fp, fn := 0, 0
		for _, v := range s0 {
			if v > t {
				fp++
			}
		}
		for _, v := range s1 {
			if v <= t {
				fn++
			}
		}
		if m := normQuantile(1-clopperPearsonUpper(fp, len(s0), alpha)) - normQuantile(clopperPearsonUpper(fn, len(s1), alpha)); m > best {
			best, bestT = m, t
		}
	}
	return bestT
}

// clopperPearsonUpper is the one-sided upper confidence bound, at level
// 1 − a, on a binomial proportion with k successes in n trials.
func clopperPearsonUpper(k, n int, a float64) float64 {
	if k >= n {
		return 1
	}
	return distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a)
}

func normQuantile(p float64) float64 {
	switch {
	case p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return math.Inf(1)
	}
	return distuv.UnitNormal.Quantile(p)
}

// epsilonLB is the ε an (ε, δ)-DP mechanism needs for a test with these
// error rates: (1 − δ − FNR) ≤ e^ε FPR and (1 − δ − FPR) ≤ e^ε FNR.
func epsilonLB(fpr, fnr, delta float64) float64 {
	lb := 0.0
	for _, v := range [][2]float64{{1 - delta - fnr, fpr}, {1 - delta - fpr, fnr}} {
		if v[0] > 0 && v[1] > 0 {
			lb = math.Max(lb, math.Log(v[0]/v[1]))
		}
	}
	return lb
}

// ErrFailed is returned by callers that treat a failed audit as an error.
var ErrFailed = errors.New("the empirical lower bound exceeds the claimed privacy")
