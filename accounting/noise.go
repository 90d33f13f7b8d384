package accounting

import (
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/dpfeat/dpfeat/internal/backend"
)

// Noise is the one way randomness enters a private release: uniform 64-bit
// words, from which the exact samplers of this package (exact.go) draw
// every decision. Production code gets SecureNoise; a user who passes
// --seed gets SeededNoise, and the guarantee then says the run is for
// reproduction only. Tests may supply their own implementation; one that
// also implements Scaled scales every Gaussian release (0 switches the
// noise off, the audit's broken copies use ½).
//
// A Noise is not safe for concurrent use; Split derives independent streams
// for parallel workers.
type Noise interface {
	// Uint64 returns 64 uniform random bits.
	Uint64() uint64
	// Seeded reports whether the stream is reproducible from a user seed.
	Seeded() bool
	// Split returns a new, independent stream of the same kind.
	Split() Noise
}

// Scaled is implemented by test noise sources that scale the standard
// deviation of every Gaussian release (0: no noise and no rounding).
type Scaled interface {
	GaussianScale() float64
}

// Quiet is implemented by benchmark noise sources that leave the named
// releases without noise, to measure what each release's noise costs a fit
// (bench/shift/run's NAME!RELEASE configurations), while the others draw
// as usual. A quiet release reports its nominal std as the std used, so
// what is derived from that std (a noise ridge) stays as calibrated. Like
// Scaled, for measurement only: with it the guarantee does not hold.
type Quiet interface {
	Quiet(release string) bool
}

// source implements Noise over ChaCha8, a cryptographically strong generator
// (math/rand/v2). A secure source is keyed with 32 bytes from the operating
// system's CSPRNG (crypto/rand), so its output cannot be predicted; a seeded
// source is keyed from SHA-256 of the user's seed.
type source struct {
	c      *rand.ChaCha8
	seeded bool
}

// SecureNoise returns a cryptographically secure noise source, keyed from
// crypto/rand. It panics only if the operating system cannot provide
// randomness, in which case no private release is possible.
func SecureNoise() Noise {
	var key [32]byte
	if _, err := crand.Read(key[:]); err != nil {
		panic(fmt.Sprintf("accounting: the operating system's random source failed: %v", err))
	}
	return newSource(key, false)
}

// SeededNoise returns a reproducible noise source for the given seed. Its
// releases are not private against anyone who knows or guesses the seed.
func SeededNoise(seed uint64) Noise {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	return newSource(sha256.Sum256(append([]byte("dpfeat noise seed v1:"), b[:]...)), true)
}

func newSource(key [32]byte, seeded bool) *source {
	c := rand.NewChaCha8(key)
	return &source{c: c, seeded: seeded}
}

func (s *source) Uint64() uint64 { return s.c.Uint64() }
func (s *source) Seeded() bool   { return s.seeded }

// NoiseState returns a seeded source's state, to be stored in a checkpoint
// so that a resumed run continues the same stream (RestoreNoise). A secure
// source has no state to save: its key must never be written down, and a
// resumed secure run simply draws fresh noise.
func NoiseState(n Noise) ([]byte, error) {
	s, ok := n.(*source)
	if !ok || !s.seeded {
		return nil, fmt.Errorf("only a seeded noise source has a state to save")
	}
	return s.c.MarshalBinary()
}

// RestoreNoise returns the seeded source NoiseState saved.
func RestoreNoise(state []byte) (Noise, error) {
	c := new(rand.ChaCha8)
	if err := c.UnmarshalBinary(state); err != nil {
		return nil, fmt.Errorf("noise state: %w", err)
	}
	return &source{c: c, seeded: true}, nil
}

// Split derives a child key from this stream (secure sources mix in fresh
// operating-system randomness as well).
func (s *source) Split() Noise {
	var key [32]byte
	if _, err := s.c.Read(key[:]); err != nil {
		panic(err) // ChaCha8.Read never fails
	}
	if !s.seeded {
		var fresh [32]byte
		if _, err := crand.Read(fresh[:]); err != nil {
			panic(fmt.Sprintf("accounting: the operating system's random source failed: %v", err))
		}
		for i := range key {
			key[i] ^= fresh[i]
		}
	}
	return newSource(key, s.seeded)
}

// LatticeBits sets a Gaussian release's granularity: the lattice step is
// g = 2^(⌊log₂ σ⌋ + 1 − LatticeBits), so σ/g ∈ [2³¹, 2³²). (It was 40
// until the sampler drew its geometric proposals by inversion: with
// s ≈ 2³², float64 decides ⌊−s·ln U⌋ but about once in 2¹⁴ draws, and
// the lattice's rounding still adds at most spread·z·2⁻³¹ to σ, 4·10⁻⁶
// relative for a 1664×1664 matrix at z = 5.)
const LatticeBits = 32

// lattice returns the step g of a release of noise std σ > 0 (see
// LatticeBits). The step is at least 2⁻¹⁰⁰⁰ (a normal float64 far from underflow, so that
// x/g stays finite); a release with std below that gets s = 1 there.
func lattice(std float64) float64 {
	return math.Ldexp(1, max(math.Ilogb(std)+1-LatticeBits, -1000))
}

// latticeStd returns the noise std σ′ a lattice release uses for a nominal
// std σ = z·Δ, and the lattice step g it uses: rounding each of the
// release's coordinates to the lattice moves it by up to g/2 on each of
// two neighbouring datasets, so the L2 sensitivity grows by at most
// spread·g (spread: √(number of coordinates), or d for a symmetric d×d
// matrix in the Frobenius isometry); σ grows by z times that, z = σ/Δ.
// The step is the one of σ′ itself: a σ just below a power of two can
// cross it once the margin is added, which doubles the step — the margin
// is then sized again for the doubled step (it was sized for the first,
// and the noise came up short by spread·z·2⁻³², 1.9·10⁻⁶ at D = 1664,
// z = 5). Relative growth ≤ spread·z·2⁻³⁰.
func latticeStd(std, sens, spread float64) (eff, g float64) {
	if !(sens > 0) {
		panic(fmt.Sprintf("accounting: a Gaussian release needs its sensitivity > 0, got %v", sens))
	}
	g = lattice(std)
	for {
		eff = std * (1 + spread*g/sens)
		next := lattice(eff)
		if next <= g {
			return eff, g
		}
		g = next // (g only grows, so this ends)
	}
}

// latticeScale is ⌈σ/g⌉ with a margin for the float division's rounding.
func latticeScale(std, g float64) uint64 {
	return uint64(math.Ceil(std / g * (1 + 0x1p-50)))
}

// scaled applies a test source's GaussianScale.
func scaled(n Noise, std float64) float64 {
	if s, ok := n.(Scaled); ok {
		return std * s.GaussianScale()
	}
	return std
}

// AddGaussian releases x with Gaussian noise of nominal std σ = std for a
// release of L2 sensitivity sens, in place, and returns the std used.
//
// The release resists floating-point attacks (Mironov 2012; the lattice
// test of #15 picked the right neighbour in 97.7% of trials against
// x + σ·NormFloat64): as in Google's differential-privacy library and
// OpenDP, each value is rounded to a lattice gℤ, g a power of two 2⁻³¹σ
// or finer, and discrete noise on that lattice is added: x ← g·(round(x/g)
// + K) with K ~ N_ℤ(0, s²) sampled exactly (DiscreteGaussian), s =
// ⌈σ′/g⌉. Every output is then a function of an integer whose law has full
// support, whatever x. The rounding adds at most √len·g to the
// sensitivity, which σ′ = latticeStd covers. The discrete Gaussian has the
// continuous one's zCDP/Rényi bounds exactly (CKS 2020, Prop. 5 and Thm.
// 14, lattice shifts); its Neyman–Pearson trade-off matches the
// continuous Gaussian's to relative order s⁻² ≤ 2⁻⁶², far inside the
// factor 1 + 2⁻⁵⁰ by which s is at least rounded up — so the accountant's Gaussian (GDP)
// statement holds for the release as computed.
func AddGaussian(n Noise, x []float64, std, sens float64) float64 {
	return AddGaussianPart(n, x, std, sens, len(x))
}

// AddGaussianPart is AddGaussian for x, one part of a release of total
// coordinates released in several pieces (the lattice's rounding is
// counted over all of them: spread √total).
func AddGaussianPart(n Noise, x []float64, std, sens float64, total int) float64 {
	checkStd(std)
	std = scaled(n, std)
	if std == 0 || len(x) == 0 {
		return std
	}
	if total < len(x) {
		panic(fmt.Sprintf("accounting: AddGaussianPart: a part of %d coordinates of a release of %d", len(x), total))
	}
	eff, g := latticeStd(std, sens, math.Sqrt(float64(total)))
	s := latticeScale(eff, g)
	inChunks(n, len(x), func(c Noise, lo, hi int) {
		dg := newDiscreteGaussian(c, s)
		for i := lo; i < hi; i++ {
			x[i] = onLattice(x[i], g, dg.draw())
		}
	})
	return float64(s) * g
}

// drawChunk is the number of draws one noise stream makes in a release;
// chunks are fixed by the release's size alone, so a seeded run draws the
// same values whatever the number of cores.
const drawChunk = 1 << 14

// inChunks runs fill over [0, count) in chunks of drawChunk, each with its
// own stream split from n in chunk order, on all cores.
func inChunks(n Noise, count int, fill func(c Noise, lo, hi int)) {
	chunks := (count + drawChunk - 1) / drawChunk
	if chunks <= 1 {
		fill(n, 0, count)
		return
	}
	streams := make([]Noise, chunks)
	for i := range streams {
		streams[i] = n.Split()
	}
	next := make(chan int, chunks)
	for i := 0; i < chunks; i++ {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), chunks); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fill(streams[i], i*drawChunk, min(count, (i+1)*drawChunk))
			}
		}()
	}
	wg.Wait()
}

// onLattice returns g·(round(v/g) + k), computed as a function of the
// integer round(v/g) + k alone (both terms are multiples of g, and IEEE
// addition rounds their exact sum).
// A non-finite v (a statistic that overflowed) stays as it is; callers
// check results for finiteness.
func onLattice(v, g float64, k int64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	return (math.RoundToEven(v/g) + float64(k)) * g
}

// AddSymmetricGaussian releases the symmetric d×d row-major matrix a with
// symmetric Gaussian noise, in place: the diagonal gets N(0, σ²) and the
// upper triangle N(0, σ²/2), mirrored into the lower one, on the lattice
// of AddGaussian (diagonal and off-diagonal scales each rounded up); it
// returns the diagonal's std. sens is the Frobenius sensitivity.
//
// This is the papers' mechanism: Mehta et al. 2023 add "a d×d matrix each
// of whose coordinates is an i.i.d. Gaussian" (Alg. 1 line 8, Alg. 2 line 2)
// — the Gaussian mechanism on the whole matrix, whose L2 sensitivity is the
// Frobenius one, ‖xxᵀ‖_F = ‖x‖² for a Gram matrix Σ xxᵀ — and symmetrising
// the release, (E + Eᵀ)/2, is post-processing that leaves exactly this
// noise. Equivalently: the Gaussian mechanism on v(S) = (S_ii, √2·S_ij for
// i < j), a linear isometry of the symmetric matrices with the Frobenius
// norm, so its sensitivity is again ‖x‖². (An i.i.d. N(0, std²) upper
// triangle has the same guarantee and twice the off-diagonal variance.)
// In v(S) the lattice rounding moves a release by at most (g/2)·d, hence
// spread d.
func AddSymmetricGaussian(n Noise, a []float64, d int, std, sens float64) float64 {
	if len(a) != d*d {
		panic(fmt.Sprintf("accounting: AddSymmetricGaussian: len %d is not %d×%d", len(a), d, d))
	}
	checkStd(std)
	std = scaled(n, std)
	if std == 0 || d == 0 {
		return std
	}
	eff, g := latticeStd(std, sens, float64(d))
	sd := latticeScale(eff, g)
	so := latticeScale(eff/math.Sqrt2, g)
	// Draws go to the upper triangle (the released values; the lower
	// triangle mirrors it), in chunks of whole rows of about drawChunk
	// entries, each chunk with its own stream (inChunks over row groups).
	var starts []int // first row of each group
	for i, m := 0, 0; i < d; i++ {
		if m == 0 {
			starts = append(starts, i)
		}
		if m += d - i; m >= drawChunk {
			m = 0
		}
	}
	starts = append(starts, d)
	inChunks(n, (len(starts)-1)*drawChunk, func(c Noise, lo, _ int) {
		grp := lo / drawChunk
		diag, off := newDiscreteGaussian(c, sd), newDiscreteGaussian(c, so)
		for i := starts[grp]; i < starts[grp+1]; i++ {
			a[i*d+i] = onLattice(a[i*d+i], g, diag.draw())
			for j := i + 1; j < d; j++ {
				a[i*d+j] = onLattice(a[i*d+j], g, off.draw())
			}
		}
	})
	backend.MirrorUpper(a, d)
	return float64(sd) * g
}

// SampleExponential draws index i with probability proportional to
// exp(logWeights[i]), exactly: a uniform proposal among the finite entries
// accepted with probability exp(logWeights[i] − max) (BernoulliExpNeg), so
// every candidate keeps a positive probability however far it trails (the
// former Gumbel-max draw was bounded, [−3.60, 36.74], and gave candidates
// trailing by more than about 40 probability exactly 0, so its "δ = 0"
// did not strictly hold). The expected number of proposals is at most the
// number of candidates. Entries of −Inf are never chosen. It panics if
// logWeights is empty or all −Inf, or holds NaN or +Inf.
func SampleExponential(n Noise, logWeights []float64) int {
	best := math.Inf(-1)
	var finite []int
	for i, w := range logWeights {
		if math.IsNaN(w) || math.IsInf(w, 1) {
			panic(fmt.Sprintf("accounting: SampleExponential: log-weight %d is %v", i, w))
		}
		if !math.IsInf(w, -1) {
			finite = append(finite, i)
			best = math.Max(best, w)
		}
	}
	if len(finite) == 0 {
		panic("accounting: SampleExponential: no candidate with finite weight")
	}
	for {
		i := finite[IntN(n, uint64(len(finite)))]
		// best − w is rounded once; the mechanism as computed samples
		// exactly ∝ exp(−(best ⊖ w)).
		if BernoulliExpNeg(n, best-logWeights[i]) {
			return i
		}
	}
}

func checkStd(std float64) {
	if math.IsNaN(std) || std < 0 || math.IsInf(std, 0) {
		panic(fmt.Sprintf("accounting: noise standard deviation must be finite and ≥ 0, got %v", std))
	}
}

// LatticeStep returns a step on whose multiples every value of a Gaussian
// release lies, given the std the release reports (AddGaussian's and
// AddSymmetricGaussian's return values). Tests check releases with it.
func LatticeStep(used float64) float64 {
	return lattice(used) / 2
}

// StdCovers reports whether a release's std used is the nominal std with
// at most the lattice's rounding added (1e-6 relative: the rounding adds
// spread·z·2⁻³¹). Tests of noise scales use it.
func StdCovers(used, nominal float64) bool {
	return used >= nominal && used <= nominal*(1+1e-6)
}

// SumSlack is the factor by which a release's sensitivity (and so its
// noise) grows to cover the rounding of a float64 sum over up to n rows:
// a sum of n terms, each of norm ≤ c, computed in any order, is within
// γ_n·n·c of the exact sum (Higham 2002, §3.1: |error| ≤ γ_n Σ|terms| per
// coordinate, γ_n = n·u/(1 − n·u), u = 2⁻⁵³), so two neighbouring sums
// (n and n + 1 rows) differ from the exact difference by at most
// 2·γ_{n+1}·(n+1)·c, c ≤ the sensitivity: the factor 1 + 2γ_{n+1}(n+1).
// It is 1 + 2.2·10⁻¹⁶·(n+1)², e.g. 1 + 2·10⁻⁷ at n = 30,000 and
// 1 + 3.6·10⁻⁴ at n = 1.28 million. Statistics whose terms are products
// of float32 values are exact term by term in float64; the clip margin
// (C·(1 − 10⁻⁶)) covers the rounding of preprocessing.
func SumSlack(n int) float64 {
	m := float64(max(n, 0) + 1)
	u := 0x1p-53
	if m*u >= 0.5 {
		panic(fmt.Sprintf("accounting: SumSlack: %d rows is beyond float64 summation bounds", n))
	}
	return 1 + 2*m*(m*u/(1-m*u))
}
