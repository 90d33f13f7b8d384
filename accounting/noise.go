package accounting

import (
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
)

// Noise is the one way randomness enters a private release. Production code
// gets SecureNoise; a user who passes --seed gets SeededNoise, and the
// guarantee then says the run is for reproduction only. Tests may supply
// their own implementation to measure or switch off the noise.
//
// A Noise is not safe for concurrent use; Split derives independent streams
// for parallel workers.
type Noise interface {
	// NormFloat64 returns a standard normal variate.
	NormFloat64() float64
	// Float64 returns a uniform variate in [0, 1).
	Float64() float64
	// Seeded reports whether the stream is reproducible from a user seed.
	Seeded() bool
	// Split returns a new, independent stream of the same kind.
	Split() Noise
}

// source implements Noise over ChaCha8, a cryptographically strong generator
// (math/rand/v2). A secure source is keyed with 32 bytes from the operating
// system's CSPRNG (crypto/rand), so its output cannot be predicted; a seeded
// source is keyed from SHA-256 of the user's seed.
type source struct {
	r      *rand.Rand
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
	return &source{r: rand.New(c), c: c, seeded: seeded}
}

func (s *source) NormFloat64() float64 { return s.r.NormFloat64() }
func (s *source) Float64() float64     { return s.r.Float64() }
func (s *source) Seeded() bool         { return s.seeded }

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

// AddGaussian adds independent N(0, std²) noise to every element of dst.
func AddGaussian(n Noise, dst []float64, std float64) {
	checkStd(std)
	for i := range dst {
		dst[i] += std * n.NormFloat64()
	}
}

// AddSymmetricGaussian adds symmetric Gaussian noise to the d×d row-major
// matrix a: the diagonal gets independent N(0, std²) entries and the upper
// triangle independent N(0, std²/2) entries, mirrored into the lower one.
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
func AddSymmetricGaussian(n Noise, a []float64, d int, std float64) {
	if len(a) != d*d {
		panic(fmt.Sprintf("accounting: AddSymmetricGaussian: len %d is not %d×%d", len(a), d, d))
	}
	checkStd(std)
	// Draws go to the upper triangle row by row (the order a seeded run
	// reproduces); a scratch row keeps them for the lower triangle, which
	// is then filled in tiles (column-wise writes of a large matrix would
	// miss the cache on every draw).
	up := make([]float64, d*d)
	off := std / math.Sqrt2
	for i := 0; i < d; i++ {
		row := up[i*d : (i+1)*d]
		row[i] = std * n.NormFloat64()
		for j := i + 1; j < d; j++ {
			row[j] = off * n.NormFloat64()
		}
	}
	const tile = 32
	for i0 := 0; i0 < d; i0 += tile {
		for j0 := i0; j0 < d; j0 += tile {
			for i := i0; i < min(i0+tile, d); i++ {
				for j := max(j0, i); j < min(j0+tile, d); j++ {
					z := up[i*d+j]
					a[i*d+j] += z
					if j != i {
						a[j*d+i] += z
					}
				}
			}
		}
	}
}

// Gumbel returns a standard Gumbel variate −log(−log U), U uniform in (0, 1).
func Gumbel(n Noise) float64 {
	u := n.Float64()
	for u == 0 {
		u = n.Float64()
	}
	return -math.Log(-math.Log(u))
}

// SampleExponential draws index i with probability proportional to
// exp(logWeights[i]) by the Gumbel-max trick: argmax_i logWeights[i] + Gᵢ.
// Working with log-weights means no exp is ever taken, so any ε and any
// utility scale is safe from overflow. Entries of −Inf are never chosen.
// It panics if logWeights is empty or all −Inf, or holds NaN or +Inf.
func SampleExponential(n Noise, logWeights []float64) int {
	best, arg := math.Inf(-1), -1
	for i, w := range logWeights {
		if math.IsNaN(w) || math.IsInf(w, 1) {
			panic(fmt.Sprintf("accounting: SampleExponential: log-weight %d is %v", i, w))
		}
		if math.IsInf(w, -1) {
			continue
		}
		if v := w + Gumbel(n); v > best || arg < 0 {
			best, arg = v, i
		}
	}
	if arg < 0 {
		panic("accounting: SampleExponential: no candidate with finite weight")
	}
	return arg
}

func checkStd(std float64) {
	if math.IsNaN(std) || std < 0 || math.IsInf(std, 0) {
		panic(fmt.Sprintf("accounting: noise standard deviation must be finite and ≥ 0, got %v", std))
	}
}
