package accounting

import (
	"fmt"
	"math"
)

// GaussianDelta returns the exact privacy profile δ(ε) of a μ-GDP mechanism,
//
//	δ(ε) = Φ(−ε/μ + μ/2) − e^ε · Φ(−ε/μ − μ/2),
//
// which is also the tight (ε, δ) curve of one Gaussian mechanism with
// sensitivity Δ and noise standard deviation s, μ = Δ/s (Balle & Wang 2018,
// "Improving the Gaussian Mechanism for Differential Privacy", Theorem 8;
// Dong, Roth & Su 2022, "Gaussian Differential Privacy", Corollary 2.13).
// The difference is computed in log space so that it stays accurate when
// both terms are tiny.
func GaussianDelta(mu, eps float64) float64 {
	switch {
	case mu == 0:
		return 0
	case math.IsInf(mu, 1):
		return 1
	case math.IsInf(eps, 1):
		return 0
	}
	a := -eps/mu + mu/2
	b := -eps/mu - mu/2
	la := logNormCDF(a)
	lb := eps + logNormCDF(b)
	if lb >= la {
		return 0
	}
	d := math.Exp(la) * -math.Expm1(lb-la)
	return math.Min(math.Max(d, 0), 1)
}

// GaussianEpsilon returns the ε at which a μ-GDP mechanism is (ε, δ)-DP.
// The curve δ(ε) is decreasing; the result is the upper end of a bisection
// run to the resolution of float64, so GaussianDelta(mu, ε) ≤ delta always
// holds for the returned ε: it is rounded toward more privacy loss, never
// less. μ = 0 gives 0; μ = +Inf gives +Inf.
func GaussianEpsilon(mu, delta float64) (float64, error) {
	if err := checkMu(mu); err != nil {
		return 0, err
	}
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	if mu == 0 {
		return 0, nil
	}
	if math.IsInf(mu, 1) {
		return math.Inf(1), nil
	}
	return invertDecreasing(func(eps float64) float64 { return GaussianDelta(mu, eps) }, delta), nil
}

// invertDecreasing returns the smallest ε ≥ 0 (to float64 resolution, rounded
// up) with f(ε) ≤ target, for a non-increasing f with f(ε) → 0. It is the
// one place where the accountants turn a δ(ε) curve into ε(δ), so every
// caller gets the same conservative rounding.
func invertDecreasing(f func(float64) float64, target float64) float64 {
	if f(0) <= target {
		return 0
	}
	lo, hi := 0.0, 1.0
	for f(hi) > target {
		lo = hi
		hi *= 2
		if math.IsInf(hi, 1) {
			return math.Inf(1)
		}
	}
	// Invariant: f(lo) > target ≥ f(hi).
	for {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi || hi-lo <= 1e-15*hi {
			return hi
		}
		if f(mid) <= target {
			hi = mid
		} else {
			lo = mid
		}
	}
}

// ComposeGDP returns the μ of the composition of Gaussian mechanisms, each
// μᵢ-GDP: μ = sqrt(Σ μᵢ²) (Dong, Roth & Su 2022, Corollary 3.3). A Gaussian
// release of a query with L2 sensitivity Δᵢ and noise standard deviation sᵢ
// has μᵢ = Δᵢ/sᵢ.
func ComposeGDP(mus ...float64) float64 {
	var s float64
	for _, m := range mus {
		s += m * m
	}
	return math.Sqrt(s)
}

func checkMu(mu float64) error {
	if math.IsNaN(mu) || mu < 0 {
		return fmt.Errorf("%w: μ must be ≥ 0, got %v", ErrInvalid, mu)
	}
	return nil
}
