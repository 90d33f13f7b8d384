package accounting

import (
	"fmt"
	"math"
)

// Conversion names a way of turning ρ-zCDP into (ε, δ)-DP.
type Conversion string

const (
	// ConversionCKS is the conversion of Canonne, Kamath & Steinke (2020),
	// "The Discrete Gaussian for Differential Privacy", Proposition 12 /
	// Corollary 13: ρ-zCDP implies (ε, δ)-DP with
	//
	//	δ = inf_{α>1} exp((α−1)(αρ−ε)) / (α−1) · (1 − 1/α)^α.
	//
	// It is never looser than ConversionSimple and is the default.
	ConversionCKS Conversion = "cks"
	// ConversionSimple is Bun & Steinke (2016), Proposition 1.3:
	// ε = ρ + 2·sqrt(ρ·log(1/δ)). The papers dpfeat implements report this
	// one; dpfeat offers it for comparison with their tables.
	ConversionSimple Conversion = "simple"
)

// ConversionGDP describes the conversion of the GDP accountant.
const ConversionGDP = "exact μ-GDP curve (Dong, Roth & Su 2022, Cor. 2.13)"

// String describes the conversion with its reference.
func (c Conversion) String() string {
	if c == ConversionSimple {
		return "ρ + 2·sqrt(ρ·log(1/δ)) (Bun & Steinke 2016, Prop. 1.3)"
	}
	return "Canonne, Kamath & Steinke 2020, Cor. 13"
}

// ZCDPOfGaussian returns the zCDP parameter of a Gaussian release with
// sensitivity Δ and noise standard deviation s: ρ = Δ²/(2s²) = μ²/2
// (Bun & Steinke 2016, Proposition 1.6).
func ZCDPOfGaussian(sensitivity, std float64) float64 {
	mu := sensitivity / std
	return mu * mu / 2
}

// ZCDPOfPure returns the zCDP parameter implied by pure ε-DP: ε²/2 in
// general (Bun & Steinke 2016, Proposition 1.4), and ε²/8 for the exponential
// mechanism, which is ε-bounded-range (Cesar & Rogers 2021, "Bounding,
// Concentrating, and Truncating: Unifying Privacy Loss Composition for Data
// Analytics", Lemma 3.2).
func ZCDPOfPure(eps float64, boundedRange bool) float64 {
	if boundedRange {
		return eps * eps / 8
	}
	return eps * eps / 2
}

// ZCDPDelta returns the δ at which ρ-zCDP implies (ε, δ)-DP, by the CKS
// conversion. The optimal order α solves
// (2α−1)ρ − ε + log(1 − 1/α) = 0 and is found by bisection; any α > 1 gives a
// valid bound, so an imperfect search can only make δ larger, never smaller.
func ZCDPDelta(rho, eps float64) (float64, error) {
	if err := checkRho(rho); err != nil {
		return 0, err
	}
	if math.IsNaN(eps) || eps < 0 {
		return 0, fmt.Errorf("%w: ε must be ≥ 0, got %v", ErrInvalid, eps)
	}
	return zcdpDelta(rho, eps), nil
}

func zcdpDelta(rho, eps float64) float64 {
	if rho == 0 {
		return 0
	}
	if math.IsInf(rho, 1) {
		return 1
	}
	// The lower end keeps α away from 1, where the bound is numerically
	// fragile; the optimum lies above (1 + ε/ρ)/2, so this only matters when
	// ε is close to ρ, where δ is large anyway.
	amin, amax := 1.01, (eps+1)/(2*rho)+2
	alpha := amin
	for i := 0; i < 2000; i++ {
		alpha = amin + (amax-amin)/2
		if alpha <= amin || alpha >= amax {
			break
		}
		if (2*alpha-1)*rho-eps+math.Log1p(-1/alpha) < 0 {
			amin = alpha
		} else {
			amax = alpha
		}
	}
	logDelta := (alpha-1)*(alpha*rho-eps) + alpha*math.Log1p(-1/alpha) - math.Log(alpha-1)
	return math.Min(math.Exp(logDelta), 1)
}

// ZCDPEpsilon returns the ε at which ρ-zCDP implies (ε, δ)-DP by the given
// conversion. For the CKS conversion the curve δ(ε) is inverted by bisection
// and the upper end is returned, so ZCDPDelta(ρ, ε) ≤ δ for the result.
func ZCDPEpsilon(rho, delta float64, conv Conversion) (float64, error) {
	if err := checkRho(rho); err != nil {
		return 0, err
	}
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	if rho == 0 {
		return 0, nil
	}
	if math.IsInf(rho, 1) {
		return math.Inf(1), nil
	}
	switch conv {
	case ConversionSimple:
		return rho + 2*math.Sqrt(rho*math.Log(1/delta)), nil
	case ConversionCKS, "":
		return invertDecreasing(func(eps float64) float64 { return zcdpDelta(rho, eps) }, delta), nil
	default:
		return 0, fmt.Errorf("%w: unknown zCDP conversion %q (want %q or %q)", ErrInvalid, conv, ConversionCKS, ConversionSimple)
	}
}

func checkRho(rho float64) error {
	if math.IsNaN(rho) || rho < 0 {
		return fmt.Errorf("%w: ρ must be ≥ 0, got %v", ErrInvalid, rho)
	}
	return nil
}
