package accounting

import (
	"math"
	"testing"
)

// logAQuad computes log A_α = log ∫ μ₀(z)·((1−q) + q·exp((2z−1)/(2σ²)))^α dz
// by composite Simpson quadrature in log space, independently of the series
// in rdp.go (the same integral dp_accounting's tests evaluate with mpmath).
func logAQuad(q, sigma, alpha float64) float64 {
	f := func(z float64) float64 {
		l0 := -z*z/(2*sigma*sigma) - math.Log(sigma*math.Sqrt(2*math.Pi))
		inner := logAddExp(math.Log1p(-q), math.Log(q)+(2*z-1)/(2*sigma*sigma))
		return l0 + alpha*inner
	}
	// The integrand is a mixture of two log-concave bumps, around z = 0 and
	// (for large α) around z = α; integrate over a range that holds both,
	// on a grid fine against σ, after locating the maximum.
	a, b := -40*sigma-1, alpha+40*sigma+1
	n := int(math.Min(4e6, math.Max(4e5, (b-a)/(sigma/400))))
	n += n % 2
	h := (b - a) / float64(n)
	best := math.Inf(-1)
	for i := 0; i <= n; i++ {
		best = math.Max(best, f(a+float64(i)*h))
	}
	s := math.Exp(f(a)-best) + math.Exp(f(b)-best)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		s += w * math.Exp(f(a+float64(i)*h)-best)
	}
	return best + math.Log(s*h/3)
}

func TestLogAMatchesQuadrature(t *testing.T) {
	// The parameter set of [dpa-rdp] and [tfp-rdp] test_compute_log_a_equals_mp,
	// which compare the series with an mpmath integral at rtol = 1e-4,
	// atol = 1e-8; here the integral is logAQuad. It covers tiny and large q,
	// tiny and large σ, integer and fractional orders up to 256.1.
	for _, c := range []struct{ q, sigma, alpha float64 }{
		{1e-7, .1, 1.01}, {1e-6, .1, 256}, {1e-5, .1, 256.1}, {1e-6, 1, 27},
		{1e-4, 1, 1.5}, {1e-3, 1, 2}, {.01, 10, 20}, {.1, 100, 20.5},
		{.99, .1, 256}, {.999, 100, 256.1},
		// The fractional orders of [dpa-rdp] test_compute_rdp_poisson_sampled_gaussian.
		{.01, 2.5, 1.5}, {.01, 2.5, 2.5},
	} {
		var got float64
		if c.alpha == math.Trunc(c.alpha) {
			got = logAInt(c.q, c.sigma, int(c.alpha))
		} else {
			var err error
			if got, err = logAFrac(c.q, c.sigma, c.alpha); err != nil {
				t.Fatal(err)
			}
		}
		want := logAQuad(c.q, c.sigma, c.alpha)
		if !near(got, want, 1e-8, 1e-4) {
			t.Errorf("log A(q=%v, σ=%v, α=%v) = %.12g, quadrature %.12g", c.q, c.sigma, c.alpha, got, want)
		}
	}
}
