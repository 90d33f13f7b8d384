package accounting

import (
	"errors"
	"math"
	"testing"
)

// TestCalibrationConservative checks, for a grid of targets and every
// accountant, that the returned multiplier meets the target and that one
// 1e-6 smaller misses it: calibration rounds toward more noise and wastes
// no more than a millionth of it.
func TestCalibrationConservative(t *testing.T) {
	type setup struct {
		name  string
		acc   Accountant
		opt   Options
		build func(z float64) []Mechanism
	}
	dpls := func(z float64) []Mechanism {
		// DP-LS (Mehta et al. 2023, Alg. 2) shape: three releases with
		// different sensitivities, each with noise z times its sensitivity.
		return []Mechanism{
			{Name: "Gram", Kind: KindGaussian, Sensitivity: 4, NoiseStd: 4 * z, Count: 1},
			{Name: "A", Kind: KindGaussian, Sensitivity: 4, NoiseStd: 4 * z, Count: 1},
			{Name: "b", Kind: KindGaussian, Sensitivity: 2, NoiseStd: 2 * z, Count: 1},
		}
	}
	setups := []setup{
		{"gdp 1 release", AccountantGDP, Options{}, GaussianReleases("r", 1)},
		{"gdp dp-ls", AccountantGDP, Options{}, dpls},
		{"gdp 101 releases", AccountantGDP, Options{}, GaussianReleases("r", 101)},
		{"zcdp cks 3 releases", AccountantZCDP, Options{}, GaussianReleases("r", 3)},
		{"zcdp simple 3 releases", AccountantZCDP, Options{Conversion: ConversionSimple}, GaussianReleases("r", 3)},
		{"rdp full batch", AccountantRDP, Options{}, GaussianReleases("r", 10)},
		{"rdp dp-sgd", AccountantRDP, Options{}, SampledGaussianSteps("s", 0.01, 1000)},
		{"auto dp-sgd", AccountantAuto, Options{}, SampledGaussianSteps("s", 0.004, 2500)},
	}
	targets := []struct{ eps, delta float64 }{
		{0.05, 1e-5}, {0.3, 1e-5}, {1, 1e-5}, {2, 1e-6}, {8, 1e-5}, {20, 1e-7},
	}
	for _, s := range setups {
		for _, tg := range targets {
			z, g, err := Calibrate(tg.eps, tg.delta, s.acc, s.opt, s.build)
			if err != nil {
				t.Fatalf("%s ε=%v: %v", s.name, tg.eps, err)
			}
			if float64(g.Epsilon) > tg.eps {
				t.Errorf("%s: σ = %v gives ε = %v > target %v", s.name, z, g.Epsilon, tg.eps)
			}
			// Recompute independently of the returned guarantee.
			again, err := Account(s.build(z), tg.delta, s.acc, s.opt)
			if err != nil {
				t.Fatal(err)
			}
			if float64(again.Epsilon) > tg.eps {
				t.Errorf("%s: recomputed ε = %v > target %v", s.name, again.Epsilon, tg.eps)
			}
			less, err := Account(s.build(z*(1-1e-6)), tg.delta, s.acc, s.opt)
			if err != nil {
				t.Fatal(err)
			}
			if float64(less.Epsilon) <= tg.eps {
				t.Errorf("%s: σ·(1−1e-6) = %v still gives ε = %v ≤ target %v: not the smallest σ", s.name, z*(1-1e-6), less.Epsilon, tg.eps)
			}
		}
	}
}

// TestEpsilonRoundsUp checks that the ε reported for a GDP or zCDP guarantee
// is never below the exact curve's: δ(ε) ≤ the requested δ.
func TestEpsilonRoundsUp(t *testing.T) {
	for _, mu := range []float64{1e-3, 0.05, 0.5, 1, 3, 10, 40} {
		for _, delta := range []float64{0.5, 1e-3, 1e-5, 1e-9, 1e-15} {
			eps, err := GaussianEpsilon(mu, delta)
			if err != nil {
				t.Fatal(err)
			}
			if d := GaussianDelta(mu, eps); d > delta {
				t.Errorf("GDP μ=%v: ε = %v gives δ = %v > %v", mu, eps, d, delta)
			}
			if eps > 0 {
				if d := GaussianDelta(mu, eps*(1-1e-9)); d <= delta {
					t.Errorf("GDP μ=%v δ=%v: ε = %v is not tight (δ at ε(1−1e-9) = %v)", mu, delta, eps, d)
				}
			}
			rho := mu * mu / 2
			eps, err = ZCDPEpsilon(rho, delta, ConversionCKS)
			if err != nil {
				t.Fatal(err)
			}
			if d := zcdpDelta(rho, eps); d > delta {
				t.Errorf("zCDP ρ=%v: ε = %v gives δ = %v > %v", rho, eps, d, delta)
			}
			simple, _ := ZCDPEpsilon(rho, delta, ConversionSimple)
			if eps > simple {
				t.Errorf("zCDP ρ=%v δ=%v: CKS ε = %v looser than the simple bound %v", rho, delta, eps, simple)
			}
		}
	}
}

// TestAccountantsAgreeOnOrder checks the accountants against each other on
// full-batch Gaussian compositions: the exact GDP curve is never above the
// zCDP and RDP conversions, which bound the same mechanism.
func TestAccountantsAgreeOnOrder(t *testing.T) {
	for _, z := range []float64{0.5, 1, 2, 5, 20} {
		for _, k := range []int{1, 3, 11, 101} {
			mechs := GaussianReleases("r", k)(z)
			gdp, err := Account(mechs, 1e-5, AccountantGDP, Options{})
			if err != nil {
				t.Fatal(err)
			}
			zc, _ := Account(mechs, 1e-5, AccountantZCDP, Options{})
			rdp, _ := Account(mechs, 1e-5, AccountantRDP, Options{})
			auto, _ := Account(mechs, 1e-5, AccountantAuto, Options{})
			if gdp.Epsilon > zc.Epsilon || gdp.Epsilon > rdp.Epsilon {
				t.Errorf("z=%v k=%v: GDP ε %v above zCDP %v or RDP %v", z, k, gdp.Epsilon, zc.Epsilon, rdp.Epsilon)
			}
			if auto.Epsilon != gdp.Epsilon || auto.Accountant != AccountantGDP {
				t.Errorf("z=%v k=%v: auto chose %s ε=%v, want gdp ε=%v", z, k, auto.Accountant, auto.Epsilon, gdp.Epsilon)
			}
		}
	}
}

func TestGaussianCompositionIsGDPCompose(t *testing.T) {
	// DP-FC shape: T+1 releases, the covariance with multiplier z₁, T
	// gradient steps with z₂; μ² = 1/z₁² + T/z₂² (Dong, Roth & Su, Cor. 3.3).
	z1, z2, T := 3.0, 7.0, 10
	mechs := []Mechanism{
		{Name: "covariance", Kind: KindGaussian, Sensitivity: 1, NoiseStd: z1, Count: 1},
		{Name: "gradient", Kind: KindGaussian, Sensitivity: 1, NoiseStd: z2, Count: T},
	}
	g, err := Account(mechs, 1e-5, AccountantGDP, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := math.Sqrt(1/(z1*z1) + float64(T)/(z2*z2))
	if math.Abs(float64(*g.Mu)-want) > 1e-15 {
		t.Errorf("μ = %v, want %v", *g.Mu, want)
	}
	mus := []float64{1 / z1}
	for i := 0; i < T; i++ {
		mus = append(mus, 1/z2)
	}
	if c := ComposeGDP(mus...); math.Abs(c-want) > 1e-15 {
		t.Errorf("ComposeGDP = %v, want %v", c, want)
	}
}

func TestPureAndExponential(t *testing.T) {
	// Two exponential-mechanism selections at ε = 0.5 each: basic
	// composition gives 1 (δ = 0); zCDP with the bounded-range bound gives
	// ρ = 2·0.5²/8.
	mechs := []Mechanism{{Name: "select", Kind: KindExponential, Epsilon: 0.5, Count: 2}}
	g, err := Account(mechs, 0, AccountantAuto, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Epsilon != 1 || g.Accountant != AccountantPure || g.Delta != 0 {
		t.Errorf("pure composition: %+v", g)
	}
	z, err := Account(mechs, 1e-5, AccountantZCDP, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if *z.Rho != 2*0.25/8 {
		t.Errorf("ρ = %v, want %v", *z.Rho, 2*0.25/8)
	}
	if ZCDPOfPure(1, false) != 0.5 || ZCDPOfPure(1, true) != 0.125 {
		t.Error("ZCDPOfPure: want ε²/2 in general and ε²/8 for bounded range")
	}
}

func TestBadInput(t *testing.T) {
	nan := math.NaN()
	gauss := func(q float64, count int) []Mechanism {
		return []Mechanism{{Name: "m", Kind: KindGaussian, Sensitivity: 1, NoiseStd: 1, SamplingRate: q, Count: count}}
	}
	cases := []struct {
		name string
		err  error
	}{
		{"δ = 0", func() error { _, err := GaussianEpsilon(1, 0); return err }()},
		{"δ = 1", func() error { _, err := GaussianEpsilon(1, 1); return err }()},
		{"δ NaN", func() error { _, err := ZCDPEpsilon(1, nan, ConversionCKS); return err }()},
		{"ρ < 0", func() error { _, err := ZCDPEpsilon(-1, 1e-5, ConversionCKS); return err }()},
		{"μ NaN", func() error { _, err := GaussianEpsilon(nan, 1e-5); return err }()},
		{"q > 1", func() error { _, err := RDPSubsampledGaussian(1.5, 1, DefaultOrders); return err }()},
		{"q NaN", func() error { _, err := Account(gauss(nan, 1), 1e-5, AccountantRDP, Options{}); return err }()},
		{"steps < 1", func() error { _, err := Account(gauss(0.1, 0), 1e-5, AccountantRDP, Options{}); return err }()},
		{"order ≤ 1", func() error { _, _, err := RDPEpsilon([]float64{1}, []float64{0.1}, 1e-5); return err }()},
		{"target ε ≤ 0", func() error {
			_, _, err := Calibrate(0, 1e-5, AccountantGDP, Options{}, GaussianReleases("r", 1))
			return err
		}()},
		{"target ε NaN", func() error {
			_, _, err := Calibrate(nan, 1e-5, AccountantGDP, Options{}, GaussianReleases("r", 1))
			return err
		}()},
		{"GDP of subsampled", func() error { _, err := Account(gauss(0.1, 1), 1e-5, AccountantGDP, Options{}); return err }()},
		{"zCDP of subsampled", func() error { _, err := Account(gauss(0.1, 1), 1e-5, AccountantZCDP, Options{}); return err }()},
		{"unknown accountant", func() error { _, err := ParseAccountant("moments"); return err }()},
		{"no mechanisms", func() error { _, err := Account(nil, 1e-5, AccountantGDP, Options{}); return err }()},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		} else if !errors.Is(c.err, ErrInvalid) {
			t.Errorf("%s: error %q does not wrap ErrInvalid", c.name, c.err)
		}
	}
}

func TestFloatJSON(t *testing.T) {
	for _, v := range []float64{math.Inf(1), math.Inf(-1), 1.5, 0} {
		b, err := Float(v).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var f Float
		if err := f.UnmarshalJSON(b); err != nil {
			t.Fatal(err)
		}
		if float64(f) != v {
			t.Errorf("%v → %s → %v", v, b, f)
		}
	}
	if FormatUp(1.0000001) != "1.00001" {
		t.Errorf("FormatUp rounds up: got %s", FormatUp(1.0000001))
	}
	for _, c := range []struct {
		rem  float64
		want string
	}{{6.9999999, "6.99999"}, {7.0000049, "7"}, {0.12345678, "0.123456"}, {0, "0"}, {-1e-9, "0"}} {
		if got := FormatRemaining(c.rem); got != c.want {
			t.Errorf("FormatRemaining(%v) = %s; want %s (rounded down)", c.rem, got, c.want)
		}
	}
	// Rounding down and up bracket x at every scale.
	for _, x := range []float64{1e-9, 0.3, 1, 7.0000049, 123456.78, 1e12} {
		if lo, hi := RoundDown(x, 6), RoundUp(x, 6); !(lo <= x && x <= hi) {
			t.Errorf("%v: down %v, up %v", x, lo, hi)
		}
	}
}

// TestDeltaInvertsAccount checks that Delta at the reported ε gives back at
// most the δ the ε was computed for, for every accountant.
func TestDeltaInvertsAccount(t *testing.T) {
	cases := []struct {
		acc   Accountant
		opt   Options
		mechs []Mechanism
	}{
		{AccountantGDP, Options{}, GaussianReleases("r", 3)(4)},
		{AccountantZCDP, Options{}, GaussianReleases("r", 3)(4)},
		{AccountantZCDP, Options{Conversion: ConversionSimple}, GaussianReleases("r", 3)(4)},
		{AccountantRDP, Options{}, SampledGaussianSteps("s", 0.01, 500)(1.2)},
		{AccountantAuto, Options{}, SampledGaussianSteps("s", 0.01, 500)(1.2)},
	}
	for _, c := range cases {
		for _, delta := range []float64{1e-3, 1e-5, 1e-8} {
			g, err := Account(c.mechs, delta, c.acc, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			dg, err := Delta(c.mechs, float64(g.Epsilon), c.acc, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if d := dg.Delta; d > delta*(1+1e-9) {
				t.Errorf("%s %v: δ(ε=%v) = %v > %v", c.acc, c.opt.Conversion, g.Epsilon, d, delta)
			}
		}
	}
}
