package accounting

import (
	"fmt"
	"math"
)

// calibration bounds: noise multipliers outside [minMultiplier,
// maxMultiplier] are not searched.
const (
	minMultiplier = 1e-6
	maxMultiplier = 1e9
	// calibrationResolution is the relative width of the final bracket:
	// the returned multiplier z satisfies ε(z) ≤ target and
	// ε(z·(1 − calibrationResolution)) > target.
	calibrationResolution = 1e-9
)

// Calibrate returns the smallest noise multiplier z whose guarantee meets the
// target: Account(build(z), delta, acc, opt) reports ε ≤ target. The
// guarantee is computed by the same Account call that reports it, so what is
// calibrated is what is printed. The search is a bisection on log z that
// keeps the invariant ε(hi) ≤ target < ε(lo) and returns hi, so no search
// tolerance can push ε above the target; the bracket is narrowed to a
// relative width of 1e-9, so a multiplier 1e-6 smaller already misses it.
//
// build maps a multiplier to the method's mechanisms; for example DP-LS's
// three releases with noise z·Δᵢ each.
func Calibrate(target, delta float64, acc Accountant, opt Options, build func(z float64) []Mechanism) (float64, Guarantee, error) {
	if math.IsNaN(target) || target <= 0 || math.IsInf(target, 0) {
		return 0, Guarantee{}, fmt.Errorf("%w: target ε must be a positive finite number, got %v", ErrInvalid, target)
	}
	if err := CheckDelta(delta); err != nil {
		return 0, Guarantee{}, err
	}
	eval := func(z float64) (Guarantee, bool, error) {
		g, err := Account(build(z), delta, acc, opt)
		if err != nil {
			return Guarantee{}, false, err
		}
		return g, float64(g.Epsilon) <= target, nil
	}
	hi := 1.0
	gHi, ok, err := eval(hi)
	if err != nil {
		return 0, Guarantee{}, err
	}
	lo := hi
	if ok {
		// Walk down until the target is missed.
		for {
			lo = hi / 2
			if lo < minMultiplier {
				return hi, gHi, nil
			}
			g, ok, err := eval(lo)
			if err != nil {
				return 0, Guarantee{}, err
			}
			if !ok {
				break
			}
			hi, gHi = lo, g
		}
	} else {
		for {
			lo = hi
			hi *= 2
			if hi > maxMultiplier {
				return 0, Guarantee{}, fmt.Errorf("%w: no noise multiplier up to %g reaches ε = %g at δ = %g", ErrInvalid, maxMultiplier, target, delta)
			}
			g, ok, err := eval(hi)
			if err != nil {
				return 0, Guarantee{}, err
			}
			if ok {
				gHi = g
				break
			}
		}
	}
	// Invariant: ε(lo) > target ≥ ε(hi).
	for hi/lo-1 > calibrationResolution {
		mid := math.Sqrt(lo * hi)
		if mid <= lo || mid >= hi {
			break
		}
		g, ok, err := eval(mid)
		if err != nil {
			return 0, Guarantee{}, err
		}
		if ok {
			hi, gHi = mid, g
		} else {
			lo = mid
		}
	}
	return hi, gHi, nil
}

// GaussianReleases returns the mechanisms of k full-batch Gaussian releases of
// a unit-sensitivity query with noise multiplier z; the builder for
// `dpfeat privacy sigma --releases k` and for methods whose releases all share
// one multiplier.
func GaussianReleases(name string, k int) func(z float64) []Mechanism {
	return func(z float64) []Mechanism {
		return []Mechanism{{Name: name, Kind: KindGaussian, Sensitivity: 1, NoiseStd: z, Count: k}}
	}
}

// SampledGaussianSteps returns the mechanisms of T Poisson-sampled Gaussian
// steps (DP-SGD) with sampling rate q and noise multiplier z.
func SampledGaussianSteps(name string, q float64, steps int) func(z float64) []Mechanism {
	return func(z float64) []Mechanism {
		return []Mechanism{{Name: name, Kind: KindGaussian, Sensitivity: 1, NoiseStd: z, SamplingRate: q, Count: steps}}
	}
}
