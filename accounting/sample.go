package accounting

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
)

// PoissonSample is a Poisson sample of a dataset's examples (DP-SGD's
// batches, Abadi et al. 2016; the sampled Gaussian mechanism of Mironov et
// al. 2019): example i is in it with probability Rate exactly (Bernoulli),
// independently of every other, decided by a stream of words that depends
// only on Key and i — AES-256 in counter mode under Key, the block (i, j)
// giving the j-th pair of 64-bit words. Key is 32 bytes drawn from the
// fit's noise source, a fresh one per sample, so the samples are as
// unpredictable as the noise (and reproducible with it under --seed).
//
// Because an example's membership depends on its index alone, the parts
// of a dataset (its shards, on a distributed runner) draw their own
// examples and together make the sample one machine makes.
type PoissonSample struct {
	Key  []byte  `json:"key"`
	Rate float64 `json:"rate"`
}

// NewPoissonSample draws a sample of rate q: its key from n.
func NewPoissonSample(n Noise, q float64) *PoissonSample {
	key := make([]byte, 32)
	for i := 0; i < 32; i += 8 {
		binary.LittleEndian.PutUint64(key[i:], n.Uint64())
	}
	return &PoissonSample{Key: key, Rate: q}
}

// Member returns the sample's membership test of example indices; it is
// safe for concurrent use.
func (s *PoissonSample) Member() (func(example int64) bool, error) {
	if len(s.Key) != 32 {
		return nil, fmt.Errorf("%w: a Poisson sample's key has %d bytes; expected 32", ErrInvalid, len(s.Key))
	}
	if err := CheckFraction("a Poisson sample's rate", s.Rate); err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(s.Key)
	if err != nil {
		return nil, err
	}
	q := s.Rate
	return func(i int64) bool {
		st := words{block: block, i: uint64(i)}
		return bernoulli(st.next, q)
	}, nil
}

// words is example i's stream: AES_K(i ‖ j) for j = 0, 1, …, two words a
// block.
type words struct {
	block  cipher.Block
	i, j   uint64
	buf    [16]byte
	filled int // words of buf not yet used: 0, 1 or 2
}

func (w *words) next() uint64 {
	if w.filled == 0 {
		var in [16]byte
		binary.LittleEndian.PutUint64(in[:8], w.i)
		binary.LittleEndian.PutUint64(in[8:], w.j)
		w.block.Encrypt(w.buf[:], in[:])
		w.j++
		w.filled = 2
	}
	w.filled--
	return binary.LittleEndian.Uint64(w.buf[8*(1-w.filled):])
}
