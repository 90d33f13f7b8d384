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
	// CanaryNorm, when above 1, scales the canary row of D′ to this norm:
	// the neighbour a method sees when rows reach it unnormalised
	// (--no-normalize). Exponential-mechanism methods only, whose
	// utilities must stay bounded whatever the rows' scale.
	CanaryNorm float64
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

// Audited lists the methods the audit runs.
var Audited = []string{"dpls", "dpplmean", "dpfc", "dpnewton", "dpsgd", "dplp", "dpplpublic", "dpplpublick"}

// releaseStats are, for the one-shot methods (DP-LS, DPPL-Mean), the
// releases whose canary coordinates the likelihood-ratio statistic reads:
// release name → entries (the class index the method reports it with, the
// flat index of the canary's coordinate, and the shift the canary makes
// there). The iterative methods' shifts depend on each step's state
// (adaptiveShift).
type releaseStat struct {
	index, at int
	shift     float64
}

// shiftAt is one coordinate of a release the likelihood-ratio statistic
// reads: its flat index, the canary's shift there, and D's own, known
// contribution (base), which is subtracted from the release first.
type shiftAt struct {
	at          int
	shift, base float64
	// extra is variance beyond the release's noise: for Poisson-sampled
	// DP-SGD, that of D's rows' sampled contribution
	extra float64
	// offDiag: an off-diagonal entry of a symmetric release, whose noise
	// variance is half the release's std² (accounting.AddSymmetricGaussian)
	offDiag bool
}

// adaptiveShift returns, for the methods that report their state θ before
// each step (DP-FC, DP-SGD, DP-Newton), the exact shift the canary makes in
// a release taken at θ: the statistic is then the likelihood ratio of the
// adaptive composition (θ is known to whoever sees the releases). The
// canary's features are u = [x, C]/√2 with x = e₀ scaled to C·(1 − 1e-6) as
// the methods clip (DP-FC: C = clip_cov; DP-SGD and DP-Newton: the
// features' clip 1, resp. clip), so it touches two coordinates: e₀, where
// no row of D contributes, and the bias coordinate, where D's rows add
// what whoever knows D and θ can compute and subtract (not for Poisson-
// sampled DP-SGD: which rows a step holds is secret, so only e₀ is read).
// With both coordinates the statistic sees the canary's whole clipped
// gradient, and for the covariance and Hessian releases the entries (0,0),
// (0,b) and (b,b) of its uuᵀ — its whole Frobenius norm, since the noise
// off the diagonal has half the variance (the mirrored (b,0) is the same
// draw).
func adaptiveShift(method string, d, m int, params map[string]float64, rows *solvers.Data, q float64) func(release string, index int, theta, values []float64) []shiftAt {
	get := func(name string, def float64) float64 { return getParam(params, name, def, true) }
	if method == "dplp" {
		return lpShift(d, m, get("norm", 1), get("clip", 1), rows, lpCanary(rows))
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
	// D's rows as the methods see them: x scaled to unit norm, clipped to
	// C·(1 − 1e-6), then u = [x, C]/√2.
	us := make([][]float64, rows.N)
	for i := range us {
		x := rows.Row(i)
		var nrm float64
		for _, v := range x {
			nrm += v * v
		}
		scale := 0.0
		if nrm = math.Sqrt(nrm); nrm > 0 {
			scale = 1 / nrm
			if cu*margin < 1 {
				scale *= cu * margin
			}
		}
		u := make([]float64, dd)
		for k, v := range x {
			u[k] = v * scale / math.Sqrt2
		}
		u[d] = ub
		us[i] = u
	}
	// residuals of the one-vs-all sigmoid loss at θ of a row u with label y
	resid := func(theta, u []float64, y int) []float64 {
		r := make([]float64, m)
		for j := range r {
			var z float64
			for k, v := range u {
				z += theta[j*dd+k] * v
			}
			r[j] = sig(z)
		}
		r[y] -= 1
		return r
	}
	canary := make([]float64, dd)
	canary[0], canary[d] = u0, ub
	// clipped scales a residual vector as the methods clip the gradient
	// r ⊗ u jointly over the classes (DP-Newton does not clip).
	clipped := func(r, u []float64) []float64 {
		if cg == 0 {
			return r
		}
		var rr, uu float64
		for _, v := range r {
			rr += v * v
		}
		for _, v := range u {
			uu += v * v
		}
		if n := math.Sqrt(rr * uu); n > cg*margin {
			f := cg * margin / n
			out := make([]float64, len(r))
			for j, v := range r {
				out[j] = f * v
			}
			return out
		}
		return r
	}
	return func(release string, index int, theta, _ []float64) []shiftAt {
		if release == "covariance" { // DP-FC: Σ uuᵀ
			return []shiftAt{{0, u0 * u0, 0, 0, false}, {d, u0 * ub, 0, 0, true}, {d*dd + d, ub * ub, float64(rows.N) * ub * ub, 0, false}}
		}
		if len(theta) != m*dd {
			return nil
		}
		rc := clipped(resid(theta, canary, 0), canary)
		switch {
		case method == "dpnewton" && release == "gradient":
			var base float64
			for i, u := range us {
				base += resid(theta, u, int(rows.Y[i]))[index] * ub
			}
			return []shiftAt{{0, rc[index] * u0, 0, 0, false}, {d, rc[index] * ub, base, 0, false}}
		case method == "dpnewton" && release == "hessian":
			// σ'(θⱼ·u)·uuᵀ at (0,0), (0,b), (b,b).
			p := rc[index]
			if index == 0 {
				p += 1
			}
			var base float64
			for i, u := range us {
				q := resid(theta, u, int(rows.Y[i]))[index]
				if int(rows.Y[i]) == index {
					q += 1
				}
				base += q * (1 - q) * ub * ub
			}
			w := p * (1 - p)
			return []shiftAt{{0, w * u0 * u0, 0, 0, false}, {d, w * u0 * ub, 0, 0, true}, {d*dd + d, w * ub * ub, base, 0, false}}
		case release == "gradient":
			out := make([]shiftAt, 0, 2*m)
			for j, v := range rc {
				out = append(out, shiftAt{at: j * dd, shift: v * u0})
			}
			base, vari := make([]float64, m), make([]float64, m)
			for i, u := range us {
				for j, v := range clipped(resid(theta, u, int(rows.Y[i])), u) {
					base[j] += v * ub
					vari[j] += v * ub * v * ub
				}
			}
			if q < 1 {
				// Which rows a step holds is secret: D's part on a bias
				// coordinate is q·Σ with variance q(1 − q)·Σ(·)², which is
				// small only for a class D hardly holds (the audit's D for
				// Poisson sampling has one row of class 0, and class 0's
				// other residuals are σ(−10)-small): class 0's bias alone.
				return append(out, shiftAt{at: d, shift: rc[0] * ub, base: q * base[0], extra: q * (1 - q) * vari[0]})
			}
			for j, v := range rc {
				out = append(out, shiftAt{at: j*dd + d, shift: v * ub, base: base[j]})
			}
			return out
		}
		return nil
	}
}

// lpCanary is DP-LP's canary: the unit vector (e₀ − û)/√2, with û the unit
// direction of D's mean. Centred, it keeps the canary's e₀ and adds D's
// mean to −û, so that ‖x̃‖ is well above C and its gradient stays clipped —
// at the whole sensitivity C_g — at every step (the centred e₀ would give
// ‖p − e₀‖·‖x̃‖ ≈ 0.8·1.2 ≈ 0.96 C_g with three classes at W = 0, less
// as W learns it).
func lpCanary(D *solvers.Data) []float64 {
	u := make([]float64, D.D)
	for i := 0; i < D.N; i++ {
		for k, v := range D.Row(i) {
			u[k] += v
		}
	}
	var nrm float64
	for _, v := range u {
		nrm += v * v
	}
	x := make([]float64, D.D)
	for k, v := range u {
		x[k] = -v / math.Sqrt(nrm) / math.Sqrt2
	}
	x[0] += 1 / math.Sqrt2
	return x
}

// lpShift is adaptiveShift for DP-LP (features scaled to norm C, centred
// on the released noisy mean, softmax gradients clipped jointly to C_g)
// with the canary x (label 0). The mean release moves by the canary's
// C·x/‖x‖ once D's known sum is subtracted; each step's gradient release
// (at the reported W) by the canary's exact clipped gradient (p − e_0) ⊗ x̃
// with x̃ = C·x/‖x‖ − m̃/(n + 1), on every coordinate, once D's own clipped
// gradients — known to whoever knows D, W and m̃ — are subtracted. D's rows are centred as on D (m̃/n) under both hypotheses:
// the method treats n as public, and the statistic does not use it; on D′
// the difference m̃·(1/n − 1/(n+1)) in D's rows is left in the noise (a
// few thousandths of its standard deviation: D's residuals nearly cancel
// for balanced classes at W ≈ 0).
func lpShift(d, m int, C, cg float64, rows *solvers.Data, canary []float64) func(release string, index int, theta, values []float64) []shiftAt {
	n := float64(rows.N)
	// the rows as the method scales them, x′ = C·x/‖x‖, and their sum
	scale := func(x []float64) []float64 {
		var nrm float64
		for _, v := range x {
			nrm += v * v
		}
		out := make([]float64, len(x))
		if nrm > 0 {
			for k, v := range x {
				out[k] = C * v / math.Sqrt(nrm)
			}
		}
		return out
	}
	xs := make([][]float64, rows.N)
	sum := make([]float64, d)
	for i := range xs {
		xs[i] = scale(rows.Row(i))
		for k, v := range xs[i] {
			sum[k] += v
		}
	}
	xc := scale(canary)
	lim := cg * (1 - 1e-6)
	var mean []float64 // the noisy sum, from this run's mean release
	// grad adds to g the clipped gradient at W of the scaled row x
	// (centred by m̃/count) with label y, and returns g.
	grad := func(g, W, x []float64, y int, count float64) []float64 {
		xt := make([]float64, d)
		for k, v := range x {
			xt[k] = v - mean[k]/count
		}
		p := make([]float64, m)
		top := math.Inf(-1)
		for j := range p {
			for k, v := range xt {
				p[j] += W[j*d+k] * v
			}
			top = math.Max(top, p[j])
		}
		var s, rr, xx float64
		for j := range p {
			p[j] = math.Exp(p[j] - top)
			s += p[j]
		}
		for j := range p {
			p[j] /= s
		}
		p[y] -= 1
		for _, v := range p {
			rr += v * v
		}
		for _, v := range xt {
			xx += v * v
		}
		f := 1.0
		if nr := math.Sqrt(rr * xx); nr > lim {
			f = lim / nr
		}
		for j, r := range p {
			for k, v := range xt {
				g[j*d+k] += f * r * v
			}
		}
		return g
	}
	return func(release string, _ int, W, values []float64) []shiftAt {
		switch release {
		case "mean":
			mean = append(mean[:0], values...)
			out := make([]shiftAt, d)
			for k, v := range xc {
				out[k] = shiftAt{at: k, shift: v, base: sum[k]}
			}
			return out
		case "gradient":
			if len(W) != m*d || len(mean) != d {
				return nil
			}
			base := make([]float64, m*d)
			for i, x := range xs {
				grad(base, W, x, int(rows.Y[i]), n)
			}
			shift := grad(make([]float64, m*d), W, xc, 0, n+1)
			out := make([]shiftAt, m*d)
			for k := range out {
				out[k] = shiftAt{at: k, shift: shift[k], base: base[k]}
			}
			return out
		}
		return nil
	}
}

func releaseStats(method string) map[string][]releaseStat {
	switch method {
	case "dpls":
		// G and A₀ gain e₀e₀ᵀ (entry 0), b₀ gains e₀ (entry 0 of class 0).
		return map[string][]releaseStat{"G": {{0, 0, 1}}, "A": {{0, 0, 1}}, "b": {{0, 0, 1}}}
	case "dpplmean":
		return map[string][]releaseStat{"sums": {{0, 0, 1}}}
	}
	return nil
}

// dataset returns D (rows zero in coordinate 0, labels balanced; with rare,
// for Poisson sampling, one row of class 0 and the others balanced) and D′
// (D plus the canary e₀ with label 0), unit-normalised as Prepare would.
func dataset(n, d, m int, rare bool) (*solvers.Data, *solvers.Data) {
	r := rand.New(rand.NewPCG(11, 13))
	x := make([]float64, n*d)
	y := make([]int32, n)
	for i := 0; i < n; i++ {
		y[i] = int32(i * m / n)
		if rare { // one row of class 0, the rest balanced over the others
			y[i] = 0
			if i > 0 {
				y[i] = int32(1 + (i-1)*(m-1)/(n-1))
			}
		}
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

// getParam is a method's hyperparameter as the audit was given it, else
// def where the method has it (when), else 1.
func getParam(params map[string]float64, name string, def float64, when bool) float64 {
	if v, ok := params[name]; ok && when {
		return v
	}
	if when {
		return def
	}
	return 1
}

// exponentialCanary builds the public set the exponential-mechanism
// prototypes choose class 0's K prototypes from: K − 1 anchors (class 0's
// mean direction in D, whose utility is far above every other point's on D
// and D′ alike), the canary's direction e₀, and decoys −e₀. On D, which is
// zero along e₀, e₀ and the decoys score alike; the canary raises e₀'s
// utility by the whole range Δu, the anchors' by Δu/2 and the decoys' by
// nothing. Every K-set but S* = anchors ∪ {e₀} holds a decoy, so the sets'
// utility u_min is the same for all on D, and on D′ is Δu higher for S*
// alone: S* has probability 1/W on D and e^ε/(e^ε + W − 1) on D′, with W
// the number of K-sets. W is taken as the first C(N, K) ≥ e^ε (20 to
// 500, so that S* stays frequent enough to count), which lets the test's
// log-ratio approach ε − log 2.
func exponentialCanary(D *solvers.Data, eps float64, K int) *solvers.Data {
	K = max(K, 1)
	want := math.Min(500, math.Max(20, math.Exp(eps)))
	N := K + 1
	for accounting.LogBinom(float64(N), float64(K)) < math.Log(want) {
		N++
	}
	d := D.D
	pub := &solvers.Data{X: make([]float64, N*d), Y: make([]int32, N), N: N, D: d, M: D.M}
	anchor := make([]float64, d)
	for i := 0; i < D.N; i++ {
		if D.Y[i] == 0 {
			for k, v := range D.Row(i) {
				anchor[k] += v
			}
		}
	}
	var nrm float64
	for _, v := range anchor {
		nrm += v * v
	}
	for i := 0; i < N; i++ {
		pub.Y[i] = -1
		row := pub.X[i*d : (i+1)*d]
		switch {
		case i < K-1:
			for k, v := range anchor {
				row[k] = v / math.Sqrt(nrm)
			}
		case i == K-1:
			row[0] = 1
		default:
			row[0] = -1
		}
	}
	return pub
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
	q := 1.0 // the canary's chance to be in a step (Poisson-sampled DP-SGD)
	if b := c.Params["batch"]; c.Method == "dpsgd" && b > 0 && b < float64(c.Rows+1) {
		q = b / float64(c.Rows+1)
	}
	D, D2 := dataset(c.Rows, c.Dim, c.Classes, q < 1)
	if c.CanaryNorm > 1 {
		if !m.Pure {
			return Result{}, fmt.Errorf("a canary of norm %g audits the exponential-mechanism methods (dpplpublic, dpplpublick); %s clips or normalises rows before its Gaussian releases", c.CanaryNorm, c.Method)
		}
		D2.X[0] = c.CanaryNorm // the canary e₀, unnormalised
	}
	if c.Method == "dplp" {
		copy(D2.Row(0), lpCanary(D)) // the canary is D2's first row
	}
	stats := releaseStats(c.Method)
	res := Result{Method: c.Method, Runs: c.Runs, Alpha: c.Alpha, Statistic: "class-0 weight on the canary's coordinate"}
	if stats != nil {
		res.Statistic = "likelihood ratio of the noisy releases at the canary's coordinates, exact shifts"
	}
	var public *solvers.Data
	if m.Pure {
		// k: dpplpublick's default 3; dpplpublic chooses one
		public = exponentialCanary(D, c.Epsilon, int(getParam(c.Params, "k", 3, c.Method == "dpplpublick")))
		res.Statistic = "whether class 0's prototypes are the canary's direction and the anchors"
	}
	sigma := 0.0 // after the first run: its calibrated multiplier, reused
	adaptive := adaptiveShift(c.Method, c.Dim, c.Classes, c.Params, D, q)
	if adaptive != nil {
		res.Statistic = "likelihood ratio of the noisy releases at the canary's coordinates, shifts from each step's state"
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
		o := solvers.Options{Epsilon: c.Epsilon, Delta: c.Delta, Params: params, Optimizer: c.Optimizer, Noise: c.Noise(), Public: public,
			Released: func(name string, index int, std float64, values []float64) {
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
			o.Sigma = sigma // the same mechanism, without calibrating it again
		}
		r, err := solvers.Fit(ctx, c.Method, d, o)
		if err != nil {
			return 0, 0, accounting.Guarantee{}, err
		}
		if !m.Pure && sigma == 0 {
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
		case stats == nil && adaptive == nil:
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

// bestThreshold picks τ maximising score(FPR⁺, FNR⁺) — the bound the
// evaluation half will compute, with Clopper–Pearson upper bounds — on the
// selection half: extreme thresholds, where one rate is tiny and its bound
// loose, lose to balanced ones.
func bestThreshold(s0, s1 []float64, alpha float64, score func(fpU, fnU float64) float64) float64 {
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
		if m := score(clopperPearsonUpper(fp, len(s0), alpha), clopperPearsonUpper(fn, len(s1), alpha)); m > best {
			best, bestT = m, t
		}
	}
	return bestT
}

// renyiRatio is the largest, over the orders, of the lower bound on the
// Rényi divergence of order α between the outputs on D′ and D that a test
// with error rates at most fpU, fnU gives — D_α of the Bernoulli outcomes,
// either way round — divided by the claimed RDP ε(α), with that order.
func renyiRatio(fpU, fnU float64, orders, curve []float64) (float64, float64) {
	p, q := 1-fnU, fpU // P(reject) on D′ and on D
	best, at := 0.0, 0.0
	if p <= q {
		return 0, 0
	}
	for i, a := range orders {
		if a <= 1 || !(curve[i] > 0) || math.IsInf(curve[i], 1) {
			continue
		}
		lb := math.Max(bernoulliRenyi(p, q, a), bernoulliRenyi(q, p, a))
		if r := lb / curve[i]; r > best {
			best, at = r, a
		}
	}
	return best, at
}

// bernoulliRenyi is D_α(Bern(p) ‖ Bern(q)) for α > 1, 0 < q < 1.
func bernoulliRenyi(p, q, a float64) float64 {
	if q <= 0 || q >= 1 {
		return math.Inf(1)
	}
	// log(p^α q^(1−α) + (1−p)^α (1−q)^(1−α)) / (α − 1), in log space
	var terms []float64
	if p > 0 {
		terms = append(terms, a*math.Log(p)+(1-a)*math.Log(q))
	}
	if p < 1 {
		terms = append(terms, a*math.Log1p(-p)+(1-a)*math.Log1p(-q))
	}
	m := math.Inf(-1)
	for _, t := range terms {
		m = math.Max(m, t)
	}
	var sum float64
	for _, t := range terms {
		sum += math.Exp(t - m)
	}
	return (m + math.Log(sum)) / (a - 1)
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

// countErrors counts the false positives (statistic of D above tau) and
// false negatives (statistic of D′ at or below it) of the test "D′ when the
// statistic exceeds tau".
func countErrors(s0, s1 []float64, tau float64) (fp, fn int) {
	for _, v := range s0 {
		if v > tau {
			fp++
		}
	}
	for _, v := range s1 {
		if v <= tau {
			fn++
		}
	}
	return fp, fn
}
