package accounting

import (
	"fmt"
	"math"
)

// Private hyperparameter selection, Papernot & Steinke (2022),
// "Hyperparameter Tuning with Rényi Differential Privacy", Thm. 2: run a
// randomized base algorithm Q (a uniformly random candidate setting,
// trained, and scored on validation data) K times, K drawn from a
// truncated negative binomial D_{η,γ}, and release the best run. If Q is
// (λ, ε(λ))-RDP for all λ, the whole procedure is (λ, ε′(λ))-RDP with
//
//	ε′(λ) = ε(λ) + (1+η)(1 − 1/λ̂)ε(λ̂) + (1+η)·log(1/γ)/λ̂ + log E[K]/(λ − 1)
//
// for every λ̂ ≥ 1 (dpfeat takes the best). Here every candidate is a
// full-batch Gaussian composition calibrated to μ-GDP, whose RDP is
// exactly λμ²/2 (zCDP ρ = μ²/2), or an ε-DP exponential mechanism with
// ρ = ε²/8; the score is the validation accuracy with Gaussian noise of the
// same μ on the number of correct rows (sensitivity 1). Training and
// validation rows are disjoint, so Q is ρ-zCDP for every example. dpfeat
// searches the largest per-run ρ whose ε′, converted to (ε, δ) like every
// RDP curve in accounting, meets the sweep's ε: the reported guarantee
// includes the tuning.

// PrivateSelection is the truncated negative binomial D_{η,γ} of the
// number of runs K and the accountant of the whole selection over it.
type PrivateSelection struct {
	Eta, Gamma float64
}

// NewPrivateSelection returns D_{η,γ} with E[K] = mean (η > −1, mean > 1).
func NewPrivateSelection(eta, mean float64) PrivateSelection {
	return PrivateSelection{Eta: eta, Gamma: gammaFor(eta, mean)}
}

// ExpectedK is E[K] (Papernot & Steinke, Sec. 2).
func (s PrivateSelection) ExpectedK() float64 { return expectedK(s.Eta, s.Gamma) }

// LogPK is log P[K = k], k ≥ 1.
func (s PrivateSelection) LogPK(k int) float64 { return logPK(s.Eta, s.Gamma, k) }

// DrawK samples K by inversion (no truncation from above: a cap would
// change the distribution the bound is for).
func (s PrivateSelection) DrawK(n Noise) int {
	u := Float64(n)
	var cum float64
	for k := 1; ; k++ {
		cum += math.Exp(logPK(s.Eta, s.Gamma, k))
		if u < cum || k > 1e8 {
			return k
		}
	}
}

// RDP is ε′(λ) at each order for runs that are ρ-zCDP.
func (s PrivateSelection) RDP(rho float64, orders []float64) []float64 {
	return tuningRDP(rho, s.Eta, s.Gamma, orders)
}

// Epsilon is the (ε, δ) of the whole selection for per-run ρ.
func (s PrivateSelection) Epsilon(rho, delta float64) (float64, error) {
	eps, _, err := RDPEpsilon(DefaultOrders, s.RDP(rho, DefaultOrders), delta)
	return eps, err
}

// RunRho is the largest per-run ρ (to relative 1e-9, rounded down) at
// which the whole selection meets (epsilon, delta).
func (s PrivateSelection) RunRho(epsilon, delta float64) (float64, error) {
	lo, hi := 0.0, epsilon*epsilon
	if e, err := s.Epsilon(1e-12, delta); err != nil {
		return 0, err
	} else if e > epsilon {
		return 0, fmt.Errorf("ε = %v is too small for private selection with E[K] = %v at δ = %v (the selection alone costs ε = %.3g); raise ε or lower mean", epsilon, s.ExpectedK(), delta, e)
	}
	for hi-lo > 1e-9*hi {
		mid := (lo + hi) / 2
		e, err := s.Epsilon(mid, delta)
		if err != nil {
			return 0, err
		}
		if e <= epsilon {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// Mechanism is the whole selection as one release known by its RDP curve.
func (s PrivateSelection) Mechanism(name string, rho float64) Mechanism {
	return Mechanism{Name: name, Kind: KindRDP, RDPOrders: DefaultOrders, RDP: s.RDP(rho, DefaultOrders), Count: 1}
}

// expectedK is E[K] for D_{η,γ} (Papernot & Steinke, Sec. 2).
func expectedK(eta, gamma float64) float64 {
	if eta == 0 {
		return (1/gamma - 1) / math.Log(1/gamma)
	}
	return eta * (1 - gamma) / (gamma * (1 - math.Pow(gamma, eta)))
}

// gammaFor solves E[K] = mean for γ ∈ (0, 1) (E[K] falls from ∞ to 1 as γ
// rises): bisection to machine precision.
func gammaFor(eta, mean float64) float64 {
	lo, hi := 1e-300, 1.0
	for i := 0; i < 2000 && hi-lo > 1e-16*hi; i++ {
		mid := (lo + hi) / 2
		if lo < 1e-10 {
			mid = math.Sqrt(lo * hi)
		}
		if expectedK(eta, mid) > mean {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// logPK is log P[K = k] under D_{η,γ}, k ≥ 1.
func logPK(eta, gamma float64, k int) float64 {
	kf := float64(k)
	if eta == 0 {
		return kf*math.Log1p(-gamma) - math.Log(kf) - math.Log(math.Log(1/gamma))
	}
	lgKE, _ := math.Lgamma(kf + eta)
	lgK1, _ := math.Lgamma(kf + 1)
	lgE, _ := math.Lgamma(eta)
	// For η ∈ (−1, 0) Γ(η) < 0 and 1 − γ^η < 0: their signs cancel.
	return lgKE - lgK1 - lgE + eta*math.Log(gamma) + kf*math.Log1p(-gamma) - math.Log(math.Abs(1-math.Pow(gamma, eta)))
}

// tuningRDP is ε′(λ) at each order for runs that are ρ-zCDP.
func tuningRDP(rho, eta, gamma float64, orders []float64) []float64 {
	// min over λ̂ > 1 of (λ̂ − 1)ρ + log(1/γ)/λ̂: at λ̂ = √(log(1/γ)/ρ),
	// or as λ̂ → 1 when that is below 1.
	l := math.Log(1 / gamma)
	inner := l
	if h := math.Sqrt(l / rho); h > 1 {
		inner = 2*math.Sqrt(rho*l) - rho
	}
	ek := math.Log(expectedK(eta, gamma))
	out := make([]float64, len(orders))
	for i, a := range orders {
		out[i] = a*rho + (1+eta)*inner + ek/(a-1)
	}
	return out
}
