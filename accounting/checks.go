package accounting

import (
	"fmt"
	"math"
)

// Parameter checks, one place for every command and package (in the spirit
// of the checks package of Google's differential-privacy Go library). Each
// returns an error wrapping ErrInvalid that says what was expected; callers
// add the flag or key it came from ("--delta: …").

// ErrDelta marks a δ outside (0, 1) (it wraps ErrInvalid too).
var ErrDelta = fmt.Errorf("%w: δ must be in (0, 1)", ErrInvalid)

// CheckDelta accepts δ ∈ (0, 1).
func CheckDelta(delta float64) error {
	if !(delta > 0 && delta < 1) {
		return fmt.Errorf("%w, got %v", ErrDelta, delta)
	}
	return nil
}

// CheckEpsilon accepts a positive finite ε.
func CheckEpsilon(eps float64) error {
	if !(eps > 0) || math.IsInf(eps, 1) {
		return fmt.Errorf("%w: ε must be a positive finite number, got %v", ErrInvalid, eps)
	}
	return nil
}

// CheckFraction accepts a share in (0, 1), named by what.
func CheckFraction(what string, f float64) error {
	if !(f > 0 && f < 1) {
		return fmt.Errorf("%w: %s must be in (0, 1), got %v", ErrInvalid, what, f)
	}
	return nil
}

// DeltaWarning is the warning a run with δ not below 1/n gets, or "" (n is
// the number of examples, where it is public).
func DeltaWarning(delta float64, n int) string {
	if n <= 0 || delta < 1/float64(n) {
		return ""
	}
	return fmt.Sprintf("WARNING: δ = %g is not below 1/n = %g: a mechanism that publishes one random example outright would meet it. Use δ ≪ 1/n.", delta, 1/float64(n))
}

// StandIn returns one Gaussian release standing in for a total privacy
// quantity — "rho" (zCDP ρ) or "mu" (GDP μ) — and the accountant that
// states it exactly: μ = √(2ρ), rounded up until μ²/2 ≥ ρ so that the
// stand-in never accounts less than the ρ given, or μ itself.
func StandIn(quantity string, v float64) (Mechanism, Accountant) {
	want, mu := AccountantZCDP, math.Sqrt(2*v)
	for mu*mu/2 < v {
		mu = math.Nextafter(mu, math.Inf(1))
	}
	if quantity == "mu" {
		want, mu = AccountantGDP, v
	}
	return Mechanism{Name: "total " + quantity, Kind: KindGaussian, Sensitivity: mu, NoiseStd: 1, Count: 1}, want
}
