package accounting

import "math"

// logNormCDF returns log Φ(x), the log of the standard normal CDF, accurate
// in both tails: for x > 5 through log1p of the upper tail, for x ≥ −35 through
// erfc (which does not underflow there), and below that through the
// asymptotic series Φ(x) = φ(x)/|x| · (1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸ − …),
// whose truncation error at |x| ≥ 35 is below 1e-14 relative.
func logNormCDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x > 5:
		return math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
	case x >= -35:
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	case math.IsInf(x, -1):
		return math.Inf(-1)
	}
	x2 := x * x
	inv := 1 / x2
	series := 1 - inv*(1-3*inv*(1-5*inv*(1-7*inv*(1-9*inv))))
	return -x2/2 - math.Log(-x) - 0.5*math.Log(2*math.Pi) + math.Log(series)
}

// normCDF returns Φ(x).
func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// logAddExp returns log(eˣ + eʸ) without overflow.
func logAddExp(x, y float64) float64 {
	if math.IsInf(x, -1) {
		return y
	}
	if math.IsInf(y, -1) {
		return x
	}
	if x < y {
		x, y = y, x
	}
	return x + math.Log1p(math.Exp(y-x))
}

// logSubExp returns log(eˣ − eʸ) for x ≥ y, and −∞ when x ≤ y; callers
// that need x ≥ y check it themselves.
func logSubExp(x, y float64) float64 {
	if math.IsInf(y, -1) {
		return x
	}
	if x <= y {
		return math.Inf(-1)
	}
	if x-y > math.Ln2 {
		return x + math.Log1p(-math.Exp(y-x))
	}
	return y + math.Log(math.Expm1(x-y))
}
