package accounting

import (
	"math"
	"sort"
	"testing"
)

// Every statistical check below is a two-sided test at a fixed false-alarm
// rate of alpha = 1e-6 per check (|z| ≤ 4.8916), so a correct generator fails
// the whole file less than once in 10⁵ runs; a generator whose standard
// deviation is off by 1% is caught with certainty at these sample sizes.
const (
	falseAlarm = 1e-6
	zCrit      = 4.891638475699 // Φ⁻¹(1 − 1e-6/2)
)

// varianceZ returns the z-score of Σx²/std², which is χ²(n) under N(0, std²),
// through the normal approximation (n ≥ 10⁴ here).
func varianceZ(xs []float64, std float64) float64 {
	var ss float64
	for _, x := range xs {
		ss += (x / std) * (x / std)
	}
	n := float64(len(xs))
	return (ss - n) / math.Sqrt(2*n)
}

func meanZ(xs []float64, std float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs)) / (std / math.Sqrt(float64(len(xs))))
}

// ksStat returns the Kolmogorov–Smirnov distance of xs from N(0, std²).
func ksStat(xs []float64, std float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := float64(len(s))
	var d float64
	for i, x := range s {
		F := normCDF(x / std)
		d = math.Max(d, math.Max(F-float64(i)/n, float64(i+1)/n-F))
	}
	return d
}

// ksCrit is the asymptotic KS critical value at level falseAlarm:
// sqrt(−ln(α/2) / (2n)).
func ksCrit(n int) float64 { return math.Sqrt(-math.Log(falseAlarm/2) / (2 * float64(n))) }

func checkGaussian(t *testing.T, label string, xs []float64, std float64) {
	t.Helper()
	if z := varianceZ(xs, std); math.Abs(z) > zCrit {
		t.Errorf("%s: variance z = %.2f (|z| > %.2f): empirical std %.5g, asked %.5g", label, z, zCrit, empiricalStd(xs), std)
	}
	if z := meanZ(xs, std); math.Abs(z) > zCrit {
		t.Errorf("%s: mean z = %.2f (|z| > %.2f)", label, z, zCrit)
	}
	if d, c := ksStat(xs, std), ksCrit(len(xs)); d > c {
		t.Errorf("%s: KS distance %.5f > %.5f", label, d, c)
	}
}

func empiricalStd(xs []float64) float64 {
	var ss float64
	for _, x := range xs {
		ss += x * x
	}
	return math.Sqrt(ss / float64(len(xs)))
}

func sources() map[string]Noise {
	return map[string]Noise{"secure": SecureNoise(), "seeded": SeededNoise(42)}
}

func TestAddGaussianScale(t *testing.T) {
	for name, n := range sources() {
		for _, std := range []float64{1e-3, 1, 37.5} {
			xs := make([]float64, 200_000)
			used := AddGaussian(n, xs, std, std)
			if used < std || used > std*(1+1e-6) {
				t.Fatalf("%s: std %v used for %v", name, used, std)
			}
			checkGaussian(t, name, xs, used)
		}
	}
}

func TestAddSymmetricGaussian(t *testing.T) {
	const d, reps, std = 40, 60, 2.5
	for name, n := range sources() {
		var diag, off []float64
		for r := 0; r < reps; r++ {
			a := make([]float64, d*d)
			AddSymmetricGaussian(n, a, d, std, 1)
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					if a[i*d+j] != a[j*d+i] {
						t.Fatalf("%s: not symmetric at (%d,%d): %v vs %v", name, i, j, a[i*d+j], a[j*d+i])
					}
				}
				diag = append(diag, a[i*d+i])
				for j := i + 1; j < d; j++ {
					off = append(off, a[i*d+j])
				}
			}
		}
		// The diagonal has variance std², the off-diagonal std²/2: the
		// symmetrised (E + Eᵀ)/2 of an i.i.d. N(0, std²) matrix E.
		checkGaussian(t, name+" off-diagonal", off, std/math.Sqrt2)
		if z := varianceZ(diag, std); math.Abs(z) > zCrit {
			t.Errorf("%s diagonal: variance z = %.2f", name, z)
		}
	}
}

func TestSampleExponentialFrequencies(t *testing.T) {
	// The exact sampler must draw i with probability softmax(logWeights)_i,
	// whatever the scale of the weights; a chi-square goodness-of-fit test
	// at the same false-alarm rate (critical value by Wilson–Hilferty).
	logits := []float64{0, 1, 2, -1, math.Inf(-1), 0.5}
	shifted := make([]float64, len(logits))
	for i, l := range logits {
		shifted[i] = l + 1e6 // huge utilities: exp would overflow
	}
	const draws = 120_000
	for name, n := range sources() {
		for _, w := range [][]float64{logits, shifted} {
			counts := make([]float64, len(w))
			for i := 0; i < draws; i++ {
				counts[SampleExponential(n, w)]++
			}
			if counts[4] != 0 {
				t.Fatalf("%s: a −Inf weight was chosen %v times", name, counts[4])
			}
			var norm float64
			for _, l := range logits {
				norm += math.Exp(l)
			}
			var chi2 float64
			k := 0
			for i, l := range logits {
				if math.IsInf(l, -1) {
					continue
				}
				e := draws * math.Exp(l) / norm
				chi2 += (counts[i] - e) * (counts[i] - e) / e
				k++
			}
			df := float64(k - 1)
			// Wilson–Hilferty: χ²_{1−α}(df) ≈ df·(1 − 2/(9df) + z·sqrt(2/(9df)))³
			// with z = Φ⁻¹(1 − α) = 4.753424.
			crit := df * math.Pow(1-2/(9*df)+4.753424*math.Sqrt(2/(9*df)), 3)
			if chi2 > crit {
				t.Errorf("%s: χ² = %.2f > %.2f: frequencies %v", name, chi2, crit, counts)
			}
		}
	}
}

func TestSeededNoiseReproducible(t *testing.T) {
	a, b := SeededNoise(7), SeededNoise(7)
	c := SeededNoise(8)
	same, diff := true, false
	for i := 0; i < 100; i++ {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		same = same && x == y
		diff = diff || x != z
	}
	if !same || !diff {
		t.Errorf("seeded streams: same seed equal = %v, different seeds differ = %v", same, diff)
	}
	if !a.Seeded() || SecureNoise().Seeded() {
		t.Error("Seeded() must be true exactly for seeded sources")
	}
	if !a.Split().Seeded() || SecureNoise().Split().Seeded() {
		t.Error("Split must keep the kind of source")
	}
	s1, s2 := SecureNoise(), SecureNoise()
	if s1.Uint64() == s2.Uint64() {
		t.Error("two secure sources produced the same first variate")
	}
}
