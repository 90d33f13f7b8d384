package audit

import (
	"errors"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat/distuv"
)

// From the test's error counts to lower bounds on the privacy loss:
// thresholds, Clopper–Pearson, μ_LB, ε_LB and Rényi bounds.

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
	return floats.LogSumExp(terms) / (a - 1)
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
