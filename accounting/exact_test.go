package accounting

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// chi2Crit is the Wilson–Hilferty approximation of the χ² quantile at
// 1 − α with z = Φ⁻¹(1 − α) = 4.753424 (α = 1e-6).
func chi2Crit(df float64) float64 {
	return df * math.Pow(1-2/(9*df)+4.753424*math.Sqrt(2/(9*df)), 3)
}

// TestDiscreteGaussianPMF: N_ℤ(0, s²) against its exact probabilities
// exp(−y²/2s²)/Σ, by χ², for small s where every value is frequent.
func TestDiscreteGaussianPMF(t *testing.T) {
	n := SeededNoise(5)
	for _, s := range []uint64{1, 2, 3, 7} {
		const draws = 200_000
		lim := int64(6 * s)
		counts := map[int64]float64{}
		for i := 0; i < draws; i++ {
			counts[DiscreteGaussian(n, s)]++
		}
		var norm float64
		for y := -12 * int64(s); y <= 12*int64(s); y++ {
			norm += math.Exp(-float64(y*y) / (2 * float64(s*s)))
		}
		var chi2, df, tail, tailP float64
		for y := -lim; y <= lim; y++ {
			e := draws * math.Exp(-float64(y*y)/(2*float64(s*s))) / norm
			chi2 += (counts[y] - e) * (counts[y] - e) / e
			df++
		}
		for y, c := range counts {
			if y < -lim || y > lim {
				tail += c
			}
		}
		for y := lim + 1; y <= 12*int64(s); y++ {
			tailP += 2 * math.Exp(-float64(y*y)/(2*float64(s*s))) / norm
		}
		e := draws * tailP
		chi2 += (tail - e) * (tail - e) / math.Max(e, 1e-9)
		if chi2 > chi2Crit(df) {
			t.Errorf("s = %d: χ² = %.1f > %.1f", s, chi2, chi2Crit(df))
		}
	}
}

// TestDiscreteGaussianLarge: at the lattice's scale (s ≈ 2³²) the mean is
// 0 and the variance s² (z-tests), and values are integers of full range.
func TestDiscreteGaussianLarge(t *testing.T) {
	n := SeededNoise(6)
	s := uint64(1)<<31 + 12345
	const draws = 100_000
	var sum, ss float64
	for i := 0; i < draws; i++ {
		y := float64(DiscreteGaussian(n, s)) / float64(s)
		sum += y
		ss += y * y
	}
	if z := sum / math.Sqrt(draws); math.Abs(z) > 5 {
		t.Errorf("mean z = %.2f", z)
	}
	// Var(Y²) = 2 for a standard normal.
	if z := (ss/draws - 1) / math.Sqrt(2.0/draws); math.Abs(z) > 5 {
		t.Errorf("variance z = %.2f (variance %v)", z, ss/draws)
	}
}

// TestBernoulliExact: exact Bernoulli(p) and Bernoulli(exp(−γ)) match their
// probabilities (z-tests), including a dyadic p and γ with an integer part.
func TestBernoulliExact(t *testing.T) {
	n := SeededNoise(7)
	const draws = 400_000
	check := func(name string, p float64, f func() bool) {
		k := 0
		for i := 0; i < draws; i++ {
			if f() {
				k++
			}
		}
		if z := (float64(k) - draws*p) / math.Sqrt(draws*p*(1-p)); math.Abs(z) > 5 {
			t.Errorf("%s: %d of %d, want p = %v (z = %.2f)", name, k, draws, p, z)
		}
	}
	for _, p := range []float64{0.3, 0.5, 0.0625, 1e-3} {
		check("Bernoulli", p, func() bool { return Bernoulli(n, p) })
	}
	for _, g := range []float64{0.1, 1, 2.5, 7} {
		check("BernoulliExpNeg", math.Exp(-g), func() bool { return BernoulliExpNeg(n, g) })
	}
	if Bernoulli(n, 0) || !Bernoulli(n, 1) || BernoulliExpNeg(n, math.Inf(1)) || !BernoulliExpNeg(n, 0) {
		t.Error("edge probabilities")
	}
}

// scripted returns the given words in order, then panics.
type scripted struct{ words []uint64 }

func (s *scripted) Uint64() uint64 {
	w := s.words[0]
	s.words = s.words[1:]
	return w
}
func (s *scripted) Seeded() bool { return true }
func (s *scripted) Split() Noise { return s }

// TestExponentialMechanismFullSupport (#15 item 8): every candidate has a
// positive probability, however far it trails. Utilities 1000 apart: a
// sequence of random words of positive probability leads the exact sampler
// to the far candidate (the former Gumbel-max draw, bounded to [−3.60,
// 36.74], could never choose it: probability exactly 0). And at a gap of
// 12 its frequency is e⁻¹² ≈ 6.1e-6, as measured.
func TestExponentialMechanismFullSupport(t *testing.T) {
	// Propose candidate 1 (a word ≥ 2⁶³), then accept it with U <
	// exp(−1000) ≈ 2^−1442.7: U's first 23 words all zero put U below
	// 2^−1472, which the exact digits of exp(−1000) decide.
	words := []uint64{1 << 63}
	for i := 0; i < 23; i++ {
		words = append(words, 0)
	}
	s := &scripted{words: words}
	if got := SampleExponential(s, []float64{0, -1000}); got != 1 {
		t.Fatalf("the scripted path chose %d", got)
	}
	if len(s.words) != 0 {
		t.Fatalf("%d words left", len(s.words))
	}
	// One more zero word short, U < 2^−1408 does not decide: more words
	// are drawn (the script runs out).
	func() {
		defer func() { recover() }()
		SampleExponential(&scripted{words: words[:23]}, []float64{0, -1000})
		t.Error("22 zero words decided U < exp(−1000)")
	}()
	n := SeededNoise(8)
	const draws = 2_000_000
	hits := 0
	for i := 0; i < draws; i++ {
		if SampleExponential(n, []float64{0, -12}) == 1 {
			hits++
		}
	}
	p := math.Exp(-12) / (1 + math.Exp(-12))
	if z := (float64(hits) - draws*p) / math.Sqrt(draws*p); math.Abs(z) > 5 {
		t.Errorf("a candidate 12 behind: %d of %d, want %.1f", hits, draws, draws*p)
	}
}

// TestLatticeAttack (#15 item 7) mounts the floating-point attack on a
// Gaussian release: given one released value y and the two neighbouring
// exact values x₀, x₁, guess which one was released by asking which
// residual y − x_b looks like the noise generator's output grid. Against
// a generator whose outputs lie on a 2⁻²⁸·σ grid (as NormFloat64's on its
// 32-bit lattice) the guess is right nearly always; against the lattice
// release (AddGaussian, AddGaussianPart, AddSymmetricGaussian) it is at
// chance.
func TestLatticeAttack(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	const trials = 4000
	attack := func(release func(x float64) float64, std float64) float64 {
		right := 0
		for i := 0; i < trials; i++ {
			x0 := r.NormFloat64() * 10
			x1 := x0 + 0.004*std*(r.Float64()+0.5) // μ ≈ 0.004
			b := r.IntN(2)
			y := release([]float64{x0, x1}[b])
			dist := func(x float64) float64 {
				v := (y - x) / std * (1 << 28)
				return math.Abs(v - math.Round(v))
			}
			guess := 0
			if dist(x1) < dist(x0) {
				guess = 1
			}
			if guess == b {
				right++
			}
		}
		return float64(right) / trials
	}
	const std = 1.7
	broken := func(x float64) float64 {
		return x + std*math.Ldexp(float64(int32(r.Uint32())>>3), -28) // on a 2⁻²⁸σ grid
	}
	if acc := attack(broken, std); acc < 0.95 {
		t.Errorf("the attack on a 32-bit-lattice generator is right %.3f of the time; it should be near 1", acc)
	}
	n := SecureNoise()
	paths := map[string]func(x float64) float64{
		"AddGaussian": func(x float64) float64 {
			v := []float64{x}
			AddGaussian(n, v, std, 1)
			return v[0]
		},
		"AddGaussianPart": func(x float64) float64 {
			v := []float64{x, 0}
			AddGaussianPart(n, v, std, 1, 10)
			return v[0]
		},
		"AddSymmetricGaussian": func(x float64) float64 {
			a := []float64{x, 0.5, 0.5, -x}
			AddSymmetricGaussian(n, a, 2, std, 1)
			return a[0]
		},
	}
	for name, f := range paths {
		// 4000 trials: a fair guess lies in 0.5 ± 0.04 with probability
		// 1 − 4e-7.
		if acc := attack(f, std); math.Abs(acc-0.5) > 0.04 {
			t.Errorf("%s: the attack is right %.3f of the time; want chance", name, acc)
		}
	}
}

// TestLatticeMarginAtAPowerOfTwo (#36 item 8): a nominal std just below a
// power of two crosses it once the rounding's margin is added, which
// doubles the lattice step; the std used must cover the rounding of the
// step actually used — read off the released values (the largest power
// of two dividing all 64 of them), not taken from the code — at z = 5
// and 50 for a release of 1664² coordinates (spread 1664). The margin
// was sized for the undoubled step: short by 1.9·10⁻⁶ relative at z = 5
// and 1.9·10⁻⁵ at z = 50.
func TestLatticeMarginAtAPowerOfTwo(t *testing.T) {
	n := SeededNoise(11)
	const spread = 1664
	for _, z := range []float64{5, 50} {
		for _, std := range []float64{math.Nextafter(4, 0), 4 * (1 - 1e-7), 1 << 20 * (1 - 2e-7)} {
			x := make([]float64, 64)
			for i := range x {
				x[i] = float64(i) * 0.37
			}
			sens := std / z
			used := AddGaussianPart(n, x, std, sens, spread*spread)
			g := math.Inf(1) // the step: the largest power of two dividing every value
			for _, v := range x {
				if v == 0 {
					continue
				}
				_, e := math.Frexp(v)
				p := math.Ldexp(1, e)
				for p > 0 && v/p != math.Trunc(v/p) {
					p /= 2
				}
				g = min(g, p)
			}
			if need := std * (1 + spread*g/sens); used < need {
				t.Errorf("z = %v, σ = %v: std used %v covers the step %g's rounding only with %v (short by %.2g relative)", z, std, used, g, need, (need-used)/need)
			}
		}
	}
}

// TestLatticeReleases: every released value is a multiple of the lattice
// step of the std the release reports, and the std used covers the
// rounding (σ′ ≥ σ·(1 + spread·g/Δ)).
func TestLatticeReleases(t *testing.T) {
	n := SeededNoise(10)
	for _, std := range []float64{1e-6, 0.3, 1, 4096.5} {
		x := []float64{math.Pi, -1e3, 1e-12, 0}
		used := AddGaussian(n, x, std, std/2)
		if used < std*(1+2*lattice(std)/(std/2)) {
			t.Errorf("σ = %v: std used %v does not cover the rounding", std, used)
		}
		g := LatticeStep(used)
		for _, v := range x {
			if v/g != math.Round(v/g) {
				t.Errorf("σ = %v: released %v is not on the lattice %v", std, v, g)
			}
		}
	}
}

// BenchmarkAddSymmetricGaussian: one 512×512 symmetric lattice release
// (131,328 exact discrete Gaussian draws); reports draws per second.
func BenchmarkAddSymmetricGaussian(b *testing.B) {
	const d = 512
	a := make([]float64, d*d)
	n := SecureNoise()
	for i := 0; i < b.N; i++ {
		AddSymmetricGaussian(n, a, d, 3.7, 1)
	}
	b.ReportMetric(float64(d*(d+1)/2)*float64(b.N)/b.Elapsed().Seconds(), "draws/s")
}

// TestExpNegInterval: the slow path's brackets hold exp(−x) (checked
// against math.Exp at float precision) and shrink with the precision.
func TestExpNegInterval(t *testing.T) {
	for _, c := range []struct{ num, den int64 }{{0, 1}, {1, 3}, {1, 1}, {7, 2}, {1000, 1}, {123456789, 1000}} {
		lo, hi := expNegInterval(big.NewInt(c.num), big.NewInt(c.den), 200)
		if lo.Cmp(hi) > 0 {
			t.Fatalf("exp(−%d/%d): bracket [%v, %v] inverted", c.num, c.den, lo, hi)
		}
		want := math.Exp(-float64(c.num) / float64(c.den))
		l, _ := lo.Float64()
		h, _ := hi.Float64()
		if want > 0 && (math.Abs(l-want) > 4e-16*want || math.Abs(h-want) > 4e-16*want) {
			t.Errorf("exp(−%d/%d) = %v, bracket [%v, %v]", c.num, c.den, want, l, h)
		}
		width := new(big.Float).Sub(hi, lo)
		rel := new(big.Float).Quo(width, hi)
		if r, _ := rel.Float64(); r > 0x1p-190 {
			t.Errorf("exp(−%d/%d): relative width %g at 200 bits", c.num, c.den, r)
		}
	}
	// The slow comparison agrees with the fast one where both decide.
	n := SeededNoise(11)
	for i := 0; i < 2000; i++ {
		w := n.Uint64()
		g := float64(i%97) / 13
		num, den := floatRat(g)
		fast := float64(w)*0x1p-64 < math.Exp(-g)*(1-1e-12)
		slow := expNegCompare(n, w, num, den)
		if fast && !slow || !fast && float64(w+1)*0x1p-64 < math.Exp(-g)*(1-1e-12) {
			t.Fatalf("w = %d, γ = %v: slow %v, fast %v", w, g, slow, fast)
		}
	}
}

// TestGeometricPMF: P(G = k) = (1 − q)·qᵏ with q = e^(−1/t), by χ², for
// small t where every value up to the tail is frequent.
func TestGeometricPMF(t *testing.T) {
	n := SeededNoise(12)
	for _, tt := range []uint64{1, 3, 10} {
		const draws = 200_000
		q := math.Exp(-1 / float64(tt))
		lim := uint64(8 * tt)
		counts := make([]float64, lim+1) // the last bin: G ≥ lim
		for i := 0; i < draws; i++ {
			counts[min(geometric(n, tt), lim)]++
		}
		var chi2 float64
		for k := uint64(0); k <= lim; k++ {
			p := (1 - q) * math.Pow(q, float64(k))
			if k == lim {
				p = math.Pow(q, float64(k))
			}
			e := draws * p
			chi2 += (counts[k] - e) * (counts[k] - e) / e
		}
		if crit := chi2Crit(float64(lim)); chi2 > crit {
			t.Errorf("t = %d: χ² = %.1f > %.1f", tt, chi2, crit)
		}
	}
}

// TestGeometricFloatPathIsExact: geometric's float decision from U's first
// word agrees with the exact search on the same U (every boundary decided
// from exp(−k/t)'s digits), for random words and for words placed next
// to a boundary, where the margin sends it to the exact path.
func TestGeometricFloatPathIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tt := range []uint64{5, 1<<32 + 7} {
		for i := 0; i < 120; i++ {
			w := r.Uint64() | 1<<53
			if i%2 == 1 {
				// next to exp(−k/t) for a random k: within a few ulps
				k := float64(r.IntN(int(3 * tt)))
				w = uint64(math.Exp(-k/float64(tt))*0x1p64) + uint64(r.IntN(4096)) - 2048
			}
			words := []uint64{w, r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
			got := geometric(&scripted{words: append([]uint64(nil), words...)}, tt)
			want := geometricSearch(&uniform{n: &scripted{words: words[1:]}, words: words[:1]}, tt, 0, math.MaxInt64)
			if got != want {
				t.Fatalf("t = %d, w = %#x: geometric %d, exact %d", tt, w, got, want)
			}
		}
	}
}

// TestBernoulliExpNegLogDomain: the log-domain decision from one word
// agrees with the exact comparison of U with exp(−γ)'s digits.
func TestBernoulliExpNegLogDomain(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 3000; i++ {
		g := r.Float64() * 6
		w := r.Uint64()
		if i%3 == 0 { // near the boundary
			w = uint64(math.Exp(-g)*0x1p64) + uint64(r.IntN(1<<20)) - 1<<19
		}
		words := []uint64{w, r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
		got := BernoulliExpNeg(&scripted{words: append([]uint64(nil), words...)}, g)
		num, den := floatRat(g)
		want := expNegCompare(&scripted{words: words[1:]}, w, num, den)
		if got != want {
			t.Fatalf("γ = %v, w = %#x: %v, exact %v", g, w, got, want)
		}
	}
}
