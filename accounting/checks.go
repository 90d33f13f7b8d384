package accounting

import (
	"fmt"
	"math"
)

// Parameter checks, one place for every command and package (in the spirit
// of the checks package of Google's differential-privacy Go library). Each
// returns an error wrapping ErrInvalid that says what was expected; callers
// add the flag or key it came from ("--delta: …").

// CheckDelta accepts δ ∈ (0, 1).
func CheckDelta(delta float64) error {
	if !(delta > 0 && delta < 1) {
		return fmt.Errorf("%w: δ must be in (0, 1), got %v", ErrInvalid, delta)
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
