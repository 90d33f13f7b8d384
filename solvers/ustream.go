package solvers

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/dpfeat/dpfeat/internal/bigmem"
)

// uBlockRows is how many rows the logistic methods process at a time: the
// block of features, its scores and its weighted copy for a Hessian stay in
// cache-sized buffers however many rows the data has.
const uBlockRows = 2048

// rows64 is implemented by in-memory rows, which stream float64 blocks as
// they are, without rounding to float32.
type rows64 interface {
	each64(fn func(x []float64, y []int32) error) error
}

func (r dataRows) each64(fn func(x []float64, y []int32) error) error {
	for start := 0; start < r.d.N; start += uBlockRows {
		n := min(uBlockRows, r.d.N-start)
		if err := fn(r.d.X[start*r.d.D:(start+n)*r.d.D], r.d.Y[start:start+n]); err != nil {
			return err
		}
	}
	return nil
}

// uStream streams the features of the logistic methods (DP-FC,
// DP-Newton), u = [clip_C(x̂), C]/√2 with x̂ = x/‖x‖ (unless features keep
// their scale): a constant coordinate carries the bias and ‖u‖ ≤ C, the
// same map as withBias, computed block by block. Each call of each is one
// pass over the data. When all of u fits in cacheBytes, the first pass
// keeps it and later passes read it from memory; otherwise every pass
// streams and memory does not grow with the number of rows.
type uStream struct {
	rows      Rows
	m         int
	c         float64
	normalize bool
	buf       []float64
	// cache, after a complete first pass, holds all of u and the labels.
	cacheBytes int64
	cache      *Data
	cached     bool
}

func newUStream(rows Rows, m int, c float64, normalize bool, cacheBytes int64) *uStream {
	return &uStream{rows: rows, m: m, c: c, normalize: normalize, cacheBytes: cacheBytes}
}

// dim is D+1, the dimension of u.
func (s *uStream) dim() int { return s.rows.Dim() + 1 }

// each calls fn with blocks of at most uBlockRows rows of u (a Data over
// the block: X, Y, N, D = dim(), M), checking labels and the context.
func (s *uStream) each(ctx context.Context, fn func(u *Data) error) error {
	d0, dd := s.rows.Dim(), s.dim()
	if s.cached {
		c := s.cache
		for start := 0; start < c.N; start += uBlockRows {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := min(uBlockRows, c.N-start)
			if err := fn(&Data{X: c.X[start*dd : (start+n)*dd], Y: c.Y[start : start+n], N: n, D: dd, M: s.m}); err != nil {
				return err
			}
		}
		return nil
	}
	total := s.rows.Len()
	if s.cacheBytes > 0 && total*int64(dd)*8 <= s.cacheBytes && s.cache == nil {
		s.cache = &Data{X: bigmem.Float64s(int(total) * dd), Y: make([]int32, total), N: int(total), D: dd, M: s.m}
	}
	if s.cache == nil && s.buf == nil {
		s.buf = make([]float64, uBlockRows*dd)
	}
	var offset int64
	block := func(n int, fill func(i int, out []float64), y []int32) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, c := range y {
			if c < 0 || int(c) >= s.m {
				return fmt.Errorf("row %d: label %d out of range 0..%d", offset+int64(i), c, s.m-1)
			}
		}
		x := s.buf
		if s.cache != nil {
			if offset+int64(n) > total {
				return fmt.Errorf("more rows than the %d announced", total)
			}
			x = s.cache.X[offset*int64(dd):]
			copy(s.cache.Y[offset:], y)
			y = s.cache.Y[offset : offset+int64(n)]
		}
		x = x[:n*dd]
		fillRows(n, dd, x, fill)
		offset += int64(n)
		return fn(&Data{X: x, Y: y, N: n, D: dd, M: s.m})
	}
	defer func() {
		// Only a complete pass fills the cache.
		s.cached = s.cache != nil && offset == total
	}()
	if r, ok := s.rows.(rows64); ok {
		return r.each64(func(x []float64, y []int32) error {
			return block(len(y), func(i int, out []float64) { fillU(x[i*d0:(i+1)*d0], out, s.c, s.normalize) }, y)
		})
	}
	return s.rows.Each(func(x []float32, y []int32) error {
		for start := 0; start < len(y); start += uBlockRows {
			n := min(uBlockRows, len(y)-start)
			xs := x[start*d0 : (start+n)*d0]
			if err := block(n, func(i int, out []float64) { fillU(xs[i*d0:(i+1)*d0], out, s.c, s.normalize) }, y[start:start+n]); err != nil {
				return err
			}
		}
		return nil
	})
}

// fillRows calls fill for rows 0..n-1 of x (n×dd), in parallel parts of
// at least 32k values.
func fillRows(n, dd int, x []float64, fill func(i int, out []float64)) {
	parts := max(1, min(runtime.GOMAXPROCS(0), n*dd>>15, n))
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				fill(i, x[i*dd:(i+1)*dd])
			}
		}()
	}
	wg.Wait()
}

// fillU writes u = [clip_c(x̂), c]/√2 for one row x into out (len(x)+1).
func fillU[T float32 | float64](x []T, out []float64, c float64, normalize bool) {
	d0 := len(x)
	var ss float64
	for k, v := range x {
		f := float64(v)
		out[k] = f
		ss += f * f
	}
	norm := math.Sqrt(ss)
	scale := 1.0
	if normalize && norm > 0 {
		scale, norm = 1/norm, 1
	}
	if norm > c {
		scale *= c / norm
	}
	scale /= math.Sqrt2
	for k := range out[:d0] {
		out[k] *= scale
	}
	out[d0] = c / math.Sqrt2
}

// toFloat32 converts a block for the float32 Gram accumulators.
func toFloat32(dst []float32, src []float64) []float32 {
	if cap(dst) < len(src) {
		dst = make([]float32, len(src))
	}
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = float32(v)
	}
	return dst
}
