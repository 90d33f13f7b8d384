package audit

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
)

// halfNoise is a deliberately broken noise source: half the calibrated
// standard deviation.
type halfNoise struct{ accounting.Noise }

func (h halfNoise) NormFloat64() float64 { return 0.5 * h.Noise.NormFloat64() }

func TestStatistics(t *testing.T) {
	// Clopper–Pearson: 0 of 100 at 97.5% is 1 − 0.025^(1/100).
	if got, want := clopperPearsonUpper(0, 100, 0.025), 1-math.Pow(0.025, 0.01); math.Abs(got-want) > 1e-9 {
		t.Errorf("CP upper(0/100) = %v, want %v", got, want)
	}
	// The GDP trade-off: error rates of the optimal μ = 1 test.
	fpr := 1 - distUnitCDF(1.5)
	fnr := distUnitCDF(0.5)
	if mu := normQuantile(1-fpr) - normQuantile(fnr); math.Abs(mu-1) > 1e-9 {
		t.Errorf("μ from the rates of a μ = 1 test: %v", mu)
	}
	if e := epsilonLB(0.01, 0.5, 0); math.Abs(e-math.Log(0.5/0.01)) > 1e-12 {
		t.Errorf("ε_LB = %v", e)
	}
}

// TestShortAuditPassesCorrectMechanisms is the CI audit: a few hundred runs
// per side of every audited mechanism; each must pass.
func TestShortAuditPassesCorrectMechanisms(t *testing.T) {
	for _, m := range Audited {
		runs := 200
		if m == "dpsgd" || m == "dplp" || m == "dpfc" || m == "dpnewton" {
			runs = 100
		}
		params := map[string]float64{}
		switch m {
		case "dpfc", "dpsgd", "dplp":
			params["steps"] = 3
		}
		delta := 1e-5
		if m == "dpplpublic" || m == "dpplpublick" {
			delta = 0
		}
		r, err := Run(context.Background(), Config{Method: m, Epsilon: 4, Delta: delta, Runs: runs, Params: params})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: μ_LB %.3f (claim %v), ε_LB %.3f (claim %.3f), FPR %.3f FNR %.3f", m, r.MuLB, deref(r.MuClaim), r.EpsLB, r.EpsClaim, r.FPR, r.FNR)
		if !r.Pass {
			t.Errorf("%s fails its audit: %+v", m, r)
		}
	}
}

// TestAuditCatchesHalvedNoise: DP-LS and DPPL-Mean with half the
// calibrated noise (twice the true μ) fail the audit; the correct ones
// pass with a bound close to their claim (their statistic is exact). (The
// iterative methods' statistics use approximate shifts: at 600 runs
// DP-SGD's broken copy fails about nine times in ten, DP-LP's rarely.)
func TestAuditCatchesHalvedNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("long audit")
	}
	for _, m := range []string{"dpplmean", "dpls"} {
		ok, err := Run(context.Background(), Config{Method: m, Epsilon: 8, Delta: 1e-5, Runs: 600})
		if err != nil {
			t.Fatal(err)
		}
		broken, err := Run(context.Background(), Config{Method: m, Epsilon: 8, Delta: 1e-5, Runs: 600,
			Noise: func() accounting.Noise { return halfNoise{accounting.SecureNoise()} }})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: correct μ_LB %.3f, broken μ_LB %.3f, claim %.3f", m, ok.MuLB, broken.MuLB, *ok.MuClaim)
		if !ok.Pass || broken.Pass {
			t.Errorf("%s: correct passes %v, broken passes %v", m, ok.Pass, broken.Pass)
		}
		if ok.MuLB < 0.5**ok.MuClaim {
			t.Errorf("%s: the statistic is loose: μ_LB %.3f for a claim of %.3f", m, ok.MuLB, *ok.MuClaim)
		}
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func distUnitCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// TestLongAuditBrokenCopies is make audit's broken-copy check (skipped
// unless DPFEAT_LONG_AUDIT is set): every audited Gaussian method, 1000
// runs per side at ε = 8, correct and with the noise halved; it logs one
// line per method for bench/RESULTS.md and fails if a correct mechanism
// fails its audit. (Whether a broken one is caught is reported, not
// required: the statistic's power differs by method.)
func TestLongAuditBrokenCopies(t *testing.T) {
	if os.Getenv("DPFEAT_LONG_AUDIT") == "" {
		t.Skip("set DPFEAT_LONG_AUDIT=1 (make audit)")
	}
	for _, m := range []string{"dpls", "dpplmean", "dpfc", "dpnewton", "dpsgd", "dplp"} {
		params := map[string]float64{}
		if m == "dpfc" || m == "dpsgd" || m == "dplp" {
			params["steps"] = 10
		}
		ok, err := Run(context.Background(), Config{Method: m, Epsilon: 8, Delta: 1e-5, Runs: 1000, Params: params})
		if err != nil {
			t.Fatal(err)
		}
		broken, err := Run(context.Background(), Config{Method: m, Epsilon: 8, Delta: 1e-5, Runs: 1000, Params: params,
			Noise: func() accounting.Noise { return halfNoise{accounting.SecureNoise()} }})
		if err != nil {
			t.Fatal(err)
		}
		caught := "caught"
		if broken.Pass {
			caught = "not caught"
		}
		t.Logf("BROKEN | %s | %.3f | %.3f | %.3f | %s |", m, *ok.MuClaim, ok.MuLB, broken.MuLB, caught)
		if !ok.Pass {
			t.Errorf("%s: the correct mechanism fails its audit", m)
		}
	}
}

// halfGumbel is a broken noise source for the exponential mechanism: its
// uniforms turn into Gumbel draws of half the scale (−log(−log u′) =
// −½·log(−log u)), which is the mechanism run at 2ε.
type halfGumbel struct{ accounting.Noise }

func (h halfGumbel) Float64() float64 {
	u := h.Noise.Float64()
	for u == 0 {
		u = h.Noise.Float64()
	}
	return math.Exp(-math.Sqrt(-math.Log(u)))
}

// TestAuditCatchesBrokenExponentialMechanism: DPPL-Public at ε = 2 passes
// its audit; run at 2ε (halved Gumbel noise) it fails.
func TestAuditCatchesBrokenExponentialMechanism(t *testing.T) {
	if testing.Short() {
		t.Skip("long audit")
	}
	ok, err := Run(context.Background(), Config{Method: "dpplpublic", Epsilon: 2, Runs: 2000})
	if err != nil {
		t.Fatal(err)
	}
	broken, err := Run(context.Background(), Config{Method: "dpplpublic", Epsilon: 2, Runs: 2000,
		Noise: func() accounting.Noise { return halfGumbel{accounting.SecureNoise()} }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dpplpublic at ε = 2: correct ε_LB %.3f, broken ε_LB %.3f", ok.EpsLB, broken.EpsLB)
	if !ok.Pass || broken.Pass {
		t.Errorf("correct passes %v (ε_LB %v), broken passes %v (ε_LB %v)", ok.Pass, ok.EpsLB, broken.Pass, broken.EpsLB)
	}
}
