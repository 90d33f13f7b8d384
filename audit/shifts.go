package audit

import (
	"math"

	"github.com/dpfeat/dpfeat/preprocessing"
	"github.com/dpfeat/dpfeat/solvers"
)

// The likelihood-ratio statistic's shifts: which coordinates of which
// release the canary moves, by how much, and what D's own rows put there.

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
	if method == "dplp" {
		return lpShift(d, m, setting(method, "norm", params), setting(method, "clip", params), rows, lpCanary(rows))
	}
	meth, err := solvers.Lookup(method)
	if err != nil || meth.Features == nil {
		return nil
	}
	dd := d + 1
	// The features' clip and the gradients' clip (0: none), and the rows
	// as the method sees them (its own feature map): D's and the canary
	// e₀'s.
	cu, cg := meth.Features.Clips(method, params)
	us := make([][]float64, rows.N)
	for i := range us {
		us[i] = solvers.BiasFeatures(rows.Row(i), cu, true)
	}
	e0 := make([]float64, d)
	e0[0] = 1
	canary := solvers.BiasFeatures(e0, cu, true)
	u0, ub := canary[0], canary[d]
	sig := solvers.Sigmoid
	margin := preprocessing.ClipMargin
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
		if method == "dpnewton" && release == "class sums" {
			// DP-Newton's first step: the canary (class 0) adds u to class
			// 0's sum; D's class-0 rows add a known amount to the bias
			// coordinate.
			var base float64
			for i := range us {
				if rows.Y[i] == 0 {
					base += ub
				}
			}
			return []shiftAt{{0, u0, 0, 0, false}, {d, ub, base, 0, false}}
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
