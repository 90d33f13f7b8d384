package accounting

import (
	"math"
	"strings"
	"testing"
)

// TestTruncatedNegativeBinomial checks D_{η,γ} against closed forms: for
// η = 1 (geometric) E[K] = 1/γ and P[K = k] = γ(1−γ)^{k−1}; for every η the
// probabilities sum to 1 and their mean is expectedK; gammaFor inverts it.
func TestTruncatedNegativeBinomial(t *testing.T) {
	if g := gammaFor(1, 10); math.Abs(g-0.1) > 1e-12 {
		t.Errorf("geometric with mean 10: γ = %v, want 0.1", g)
	}
	for k := 1; k < 20; k++ {
		if got, want := math.Exp(logPK(1, 0.1, k)), 0.1*math.Pow(0.9, float64(k-1)); math.Abs(got-want) > 1e-14 {
			t.Errorf("geometric P[K=%d] = %v, want %v", k, got, want)
		}
	}
	for _, eta := range []float64{-0.5, 0, 0.5, 1, 3} {
		for _, mean := range []float64{2, 10, 50} {
			g := gammaFor(eta, mean)
			if got := expectedK(eta, g); math.Abs(got-mean) > 1e-9*mean {
				t.Errorf("η=%v: E[K] at γ(%v) = %v", eta, mean, got)
			}
			var total, m float64
			for k := 1; k < 200000; k++ {
				p := math.Exp(logPK(eta, g, k))
				total += p
				m += float64(k) * p
				if p < 1e-18 && k > 10 {
					break
				}
			}
			if math.Abs(total-1) > 1e-6 || math.Abs(m-mean) > 1e-3*mean {
				t.Errorf("η=%v mean %v: probabilities sum to %v with mean %v", eta, mean, total, m)
			}
		}
	}
	// Draws: the sample mean of 20000 draws within 5 standard errors.
	noise := SeededNoise(3)
	g := gammaFor(1, 10)
	var sum, sum2 float64
	const n = 20000
	for i := 0; i < n; i++ {
		k := float64(PrivateSelection{Eta: 1, Gamma: g}.DrawK(noise))
		sum += k
		sum2 += k * k
	}
	mean := sum / n
	se := math.Sqrt((sum2/n - mean*mean) / n)
	if math.Abs(mean-10) > 5*se {
		t.Errorf("mean of %d draws %v (se %v), want 10", n, mean, se)
	}
}

// TestTuningRDP checks the closed-form minimum over λ̂ against a direct
// minimisation of Papernot & Steinke's Thm. 2 bound over a fine grid, and
// that the per-run ρ search is conservative and tight.
func TestTuningRDP(t *testing.T) {
	orders := []float64{1.5, 2, 4, 8, 16, 64}
	for _, c := range []struct{ rho, eta, mean float64 }{{0.01, 1, 10}, {0.5, 0, 5}, {2, 1, 3}, {1e-4, 0.5, 100}} {
		g := gammaFor(c.eta, c.mean)
		got := tuningRDP(c.rho, c.eta, g, orders)
		for i, a := range orders {
			best := math.Inf(1)
			for h := 1.0 + 1e-6; h < 1e4; h *= 1.0005 {
				v := (1+c.eta)*(1-1/h)*h*c.rho + (1+c.eta)*math.Log(1/g)/h
				best = math.Min(best, v)
			}
			want := a*c.rho + best + math.Log(c.mean)/(a-1)
			if math.Abs(got[i]-want) > 1e-6*math.Max(1, want) {
				t.Errorf("ρ=%v η=%v E[K]=%v λ=%v: ε' = %v, direct minimum %v", c.rho, c.eta, c.mean, a, got[i], want)
			}
		}
	}
	for _, eps := range []float64{1, 4, 8} {
		g := gammaFor(1, 10)
		ps := PrivateSelection{Eta: 1, Gamma: g}
		rho, err := ps.RunRho(eps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		at, _ := ps.Epsilon(rho, 1e-5)
		above, _ := ps.Epsilon(rho*(1+1e-6), 1e-5)
		if at > eps || above <= eps {
			t.Errorf("ε=%v: per-run ρ %v gives %v; ρ(1+1e-6) gives %v", eps, rho, at, above)
		}
	}
	if _, err := NewPrivateSelection(1, 100).RunRho(1e-4, 1e-5); err == nil || !strings.Contains(err.Error(), "too small") {
		t.Errorf("a budget below the selection's own cost: %v", err)
	}
}

// TestStandIn: the stand-in for a total ρ is never accounted below it, and
// a total μ is stated as itself.
func TestStandIn(t *testing.T) {
	for _, rho := range []float64{1e-9, 0.125, 0.5, 3, 1e6} {
		m, acc := StandIn("rho", rho)
		g, err := Account([]Mechanism{m}, 1e-5, acc, Options{})
		if err != nil || acc != AccountantZCDP || float64(*g.Rho) < rho {
			t.Errorf("ρ = %v: stated %v (%v, %v)", rho, g.Rho, acc, err)
		}
	}
	m, acc := StandIn("mu", 1.5)
	if g, _ := Account([]Mechanism{m}, 1e-5, acc, Options{}); acc != AccountantGDP || float64(*g.Mu) != 1.5 {
		t.Errorf("μ = 1.5: %v", g.Mu)
	}
}
