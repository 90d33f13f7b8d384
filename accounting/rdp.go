package accounting

import (
	"fmt"
	"math"
)

// DefaultOrders is the grid of Rényi orders α over which the RDP accountant
// optimises its conversion to (ε, δ)-DP. It covers the grid of Google's
// dp_accounting and Opacus (1.1 to 10.9 in steps of 0.1, then the integers
// to 63) and extends it at both ends: orders just above 1 for very large ε,
// and orders up to 4096 for very small noise multipliers or many steps at
// tiny sampling rates. A finer or wider grid can only lower the reported ε:
// every order gives a valid bound.
var DefaultOrders = defaultOrders()

func defaultOrders() []float64 {
	o := []float64{1.01, 1.02, 1.03, 1.05, 1.075}
	for x := 1; x < 100; x++ {
		o = append(o, 1+float64(x)/10)
	}
	for a := 11; a <= 64; a++ {
		o = append(o, float64(a))
	}
	return append(o, 72, 80, 96, 112, 128, 160, 192, 256, 320, 384, 512, 768, 1024, 2048, 4096)
}

// RDPGaussian returns the RDP curve α·μ²/2 of a Gaussian release with
// μ = Δ/s, at each order (Mironov 2017, "Rényi Differential Privacy",
// Proposition 7).
func RDPGaussian(mu float64, orders []float64) []float64 {
	out := make([]float64, len(orders))
	for i, a := range orders {
		out[i] = a * mu * mu / 2
	}
	return out
}

// RDPSubsampledGaussian returns the RDP of one step of the Poisson-subsampled
// Gaussian mechanism (sampling rate q, noise multiplier σ = noise std /
// sensitivity, add/remove adjacency) at each order, following Mironov, Talwar
// & Zhang (2019), "Rényi Differential Privacy of the Sampled Gaussian
// Mechanism": Section 3.3 for integer α (a finite binomial sum) and
// Section 3.4 for fractional α (the two-sided series with signed binomial
// coefficients; the signs are kept, not replaced by absolute values). Multiply
// by the number of steps for T identical steps.
func RDPSubsampledGaussian(q, sigma float64, orders []float64) ([]float64, error) {
	if math.IsNaN(q) || q < 0 || q > 1 {
		return nil, fmt.Errorf("%w: sampling rate q must be in [0, 1], got %v", ErrInvalid, q)
	}
	if math.IsNaN(sigma) || sigma < 0 {
		return nil, fmt.Errorf("%w: noise multiplier must be ≥ 0, got %v", ErrInvalid, sigma)
	}
	out := make([]float64, len(orders))
	for i, a := range orders {
		if math.IsNaN(a) || a <= 1 {
			return nil, fmt.Errorf("%w: Rényi orders must be > 1, got %v", ErrInvalid, a)
		}
		v, err := rdpSampledGaussian(q, sigma, a)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func rdpSampledGaussian(q, sigma, alpha float64) (float64, error) {
	switch {
	case q == 0:
		return 0, nil
	case sigma == 0 || math.IsInf(alpha, 1):
		return math.Inf(1), nil
	case q == 1:
		return alpha / (2 * sigma * sigma), nil
	}
	var logA float64
	var err error
	if alpha == math.Trunc(alpha) && alpha < 1e6 {
		logA = logAInt(q, sigma, int(alpha))
	} else {
		logA, err = logAFrac(q, sigma, alpha)
		if err != nil {
			return 0, err
		}
	}
	return math.Max(logA, 0) / (alpha - 1), nil
}

// logAInt computes log A_α for integer α (MTZ 2019, Section 3.3):
//
//	A_α = Σ_{k=0}^{α} C(α,k) (1−q)^{α−k} q^k exp((k²−k)/(2σ²)).
func logAInt(q, sigma float64, alpha int) float64 {
	logA := math.Inf(-1)
	lq, l1q := math.Log(q), math.Log1p(-q)
	a := float64(alpha)
	for k := 0; k <= alpha; k++ {
		kf := float64(k)
		t := LogBinom(a, kf) + kf*lq + (a-kf)*l1q + (kf*kf-kf)/(2*sigma*sigma)
		logA = logAddExp(logA, t)
	}
	return logA
}

// logAFrac computes log A_α for fractional α (MTZ 2019, Section 3.4) as the
// sum of two convergent series split at z₀ = σ² log(1/q − 1) + 1/2. The
// binomial coefficients C(α, i) change sign for i > α; terms are added or
// subtracted in log space according to that sign.
func logAFrac(q, sigma, alpha float64) (float64, error) {
	logA0, logA1 := math.Inf(-1), math.Inf(-1)
	z0 := sigma*sigma*math.Log(1/q-1) + 0.5
	lq, l1q := math.Log(q), math.Log1p(-q)
	const maxTerms = 10_000_000
	for i := 0; i < maxTerms; i++ {
		fi := float64(i)
		coef, sign := logBinomSigned(alpha, fi)
		j := alpha - fi
		logT0 := coef + fi*lq + j*l1q
		logT1 := coef + j*lq + fi*l1q
		logE0 := logNormCDF((z0 - fi) / sigma)
		logE1 := logNormCDF((j - z0) / sigma)
		logS0 := logT0 + (fi*fi-fi)/(2*sigma*sigma) + logE0
		logS1 := logT1 + (j*j-j)/(2*sigma*sigma) + logE1
		if sign > 0 {
			logA0 = logAddExp(logA0, logS0)
			logA1 = logAddExp(logA1, logS1)
		} else {
			if logS0 > logA0+1e-9*math.Abs(logA0) || logS1 > logA1+1e-9*math.Abs(logA1) {
				return 0, fmt.Errorf("accounting: RDP series for q=%v σ=%v α=%v lost precision (a partial sum turned negative)", q, sigma, alpha)
			}
			logA0 = logSubExp(logA0, logS0)
			logA1 = logSubExp(logA1, logS1)
		}
		if math.Max(logS0, logS1) < -30 && fi > alpha {
			return logAddExp(logA0, logA1), nil
		}
	}
	return 0, fmt.Errorf("accounting: RDP series for q=%v σ=%v α=%v did not converge", q, sigma, alpha)
}

// LogBinom returns log C(n, k) for real n ≥ k ≥ 0 (through log Γ, so for
// counts far beyond float64's range of C itself).
func LogBinom(n, k float64) float64 {
	a, _ := math.Lgamma(n + 1)
	b, _ := math.Lgamma(k + 1)
	c, _ := math.Lgamma(n - k + 1)
	return a - b - c
}

// logBinomSigned returns log|C(α, i)| and its sign for real α > 0 and
// integer i ≥ 0; C(α, i) = Γ(α+1) / (Γ(i+1) Γ(α−i+1)) takes the sign of
// Γ(α−i+1).
func logBinomSigned(alpha, i float64) (float64, int) {
	a, _ := math.Lgamma(alpha + 1)
	b, _ := math.Lgamma(i + 1)
	c, s := math.Lgamma(alpha - i + 1)
	return a - b - c, s
}

// RDPEpsilon converts an RDP curve (rdp[i] at orders[i]) to (ε, δ)-DP and
// returns the smallest ε over the grid and the order that attains it. Each
// order gives the bound of Balle et al. (2020), "Hypothesis Testing
// Interpretations and Rényi Differential Privacy", Theorem 21 (as used by
// dp_accounting and Opacus):
//
//	ε = RDP(α) + log(1 − 1/α) − log(δ·α)/(α − 1),
//
// for α > 1.01, and ε = 0 where δ ≥ sqrt(1 − exp(−RDP(α))), the bound through
// the KL divergence (RDP(α) ≥ KL for α ≥ 1).
func RDPEpsilon(orders, rdp []float64, delta float64) (eps, order float64, err error) {
	if err := CheckDelta(delta); err != nil {
		return 0, 0, err
	}
	if err := checkCurve(orders, rdp); err != nil {
		return 0, 0, err
	}
	eps, order = math.Inf(1), math.NaN()
	for i, a := range orders {
		r := rdp[i]
		var e float64
		switch {
		case delta*delta+math.Expm1(-r) > 0:
			e = 0
		case a > 1.01 && !math.IsInf(a, 1):
			e = r + math.Log1p(-1/a) - math.Log(delta*a)/(a-1)
		default:
			e = math.Inf(1)
		}
		if e < eps {
			eps, order = e, a
		}
	}
	return math.Max(eps, 0), order, nil
}

// RDPDelta converts an RDP curve to the smallest δ over the grid at which the
// mechanism is (ε, δ)-DP, with the same per-order bounds as RDPEpsilon
// solved for δ.
func RDPDelta(orders, rdp []float64, eps float64) (delta, order float64, err error) {
	if math.IsNaN(eps) || eps < 0 {
		return 0, 0, fmt.Errorf("%w: ε must be ≥ 0, got %v", ErrInvalid, eps)
	}
	if err := checkCurve(orders, rdp); err != nil {
		return 0, 0, err
	}
	best, order := math.Inf(1), math.NaN()
	for i, a := range orders {
		r := rdp[i]
		logDelta := math.Inf(-1)
		if r > 0 {
			logDelta = 0.5 * math.Log1p(-math.Exp(-r))
		}
		if a > 1.01 && !math.IsInf(a, 1) {
			logDelta = math.Min(logDelta, (a-1)*(r-eps+math.Log1p(-1/a))-math.Log(a))
		}
		if logDelta < best {
			best, order = logDelta, a
		}
	}
	return math.Min(math.Exp(best), 1), order, nil
}

func checkCurve(orders, rdp []float64) error {
	if len(orders) == 0 || len(orders) != len(rdp) {
		return fmt.Errorf("%w: need one RDP value per order, got %d orders and %d values", ErrInvalid, len(orders), len(rdp))
	}
	for i, a := range orders {
		if math.IsNaN(a) || a <= 1 {
			return fmt.Errorf("%w: Rényi orders must be > 1, got %v", ErrInvalid, a)
		}
		if math.IsNaN(rdp[i]) || rdp[i] < 0 {
			return fmt.Errorf("%w: RDP at order %v must be ≥ 0, got %v", ErrInvalid, a, rdp[i])
		}
	}
	return nil
}
