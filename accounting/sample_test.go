package accounting

import (
	"crypto/aes"
	"errors"
	"math"
	"testing"
)

// TestPoissonSampleStream checks an example's words against AES-256
// computed independently (openssl enc -aes-256-ecb): the all-zero key and
// block give dc95c078a2408989ad48a21492842087, and key 00…1f on the block
// (i = 5, j = 1) gives 96cc4eec3e3782d39e36444faaf8743a — example 5's
// third and fourth words.
func TestPoissonSampleStream(t *testing.T) {
	for _, c := range []struct {
		key  []byte
		i    uint64
		skip int
		want uint64
	}{
		{make([]byte, 32), 0, 0, 0x898940a278c095dc},
		{make([]byte, 32), 0, 1, 0x8720849214a248ad},
		{seq(32), 5, 2, 0xd382373eec4ecc96},
	} {
		block, err := aes.NewCipher(c.key)
		if err != nil {
			t.Fatal(err)
		}
		w := words{block: block, i: c.i}
		for range c.skip {
			w.next()
		}
		if got := w.next(); got != c.want {
			t.Errorf("key %x, example %d, word %d: %#x, want %#x", c.key[:2], c.i, c.skip, got, c.want)
		}
	}
}

func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// TestPoissonSampleRate: each example is in the sample with probability
// q — the count over 200,000 examples within 5 standard deviations of
// 200,000·q, and two samples' overlap within 5 of 200,000·q² (a fresh key
// draws an independent sample) — and membership depends on the key and
// the index alone.
func TestPoissonSampleRate(t *testing.T) {
	const n = 200000
	noise := SeededNoise(9)
	for _, q := range []float64{0.001, 0.01, 1.0 / 3, 0.9} {
		a, b := NewPoissonSample(noise, q), NewPoissonSample(noise, q)
		inA, err := a.Member()
		if err != nil {
			t.Fatal(err)
		}
		inB, _ := b.Member()
		again, _ := (&PoissonSample{Key: append([]byte(nil), a.Key...), Rate: q}).Member()
		var count, both int
		for i := int64(0); i < n; i++ {
			x := inA(i)
			if x != again(i) {
				t.Fatalf("q %v: example %d's membership changed with the same key", q, i)
			}
			if x {
				count++
				if inB(i) {
					both++
				}
			}
		}
		for _, c := range []struct {
			what string
			got  int
			p    float64
		}{{"members", count, q}, {"members of both", both, q * q}} {
			mean, sd := n*c.p, math.Sqrt(n*c.p*(1-c.p))
			if math.Abs(float64(c.got)-mean) > 5*sd {
				t.Errorf("q %v: %d %s, want %.0f ± %.0f", q, c.got, c.what, mean, 5*sd)
			}
		}
	}
}

func TestPoissonSampleChecks(t *testing.T) {
	for _, s := range []PoissonSample{{Key: make([]byte, 16), Rate: 0.1}, {Key: make([]byte, 32), Rate: 0}, {Key: make([]byte, 32), Rate: 1}, {Key: make([]byte, 32), Rate: math.NaN()}} {
		if _, err := s.Member(); !errors.Is(err, ErrInvalid) {
			t.Errorf("key of %d bytes, rate %v: %v; want ErrInvalid", len(s.Key), s.Rate, err)
		}
	}
}
