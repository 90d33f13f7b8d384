package solvers

import (
	"context"
	"fmt"
	"math"
	"runtime"

	"github.com/dpfeat/dpfeat/internal/backend"
	"github.com/dpfeat/dpfeat/internal/bigmem"
	"github.com/dpfeat/dpfeat/preprocessing"
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
	walk := newGroupWalk(r.d.Groups, nil, r.d.N)
	for start := 0; start < r.d.N; {
		n, _, _ := walk.next(uBlockRows)
		if err := fn(r.d.X[start*r.d.D:(start+n)*r.d.D], r.d.Y[start:start+n]); err != nil {
			return err
		}
		start += n
	}
	return nil
}

// uBlock is a block of rows of u and their labels: X holds N×D values.
type uBlock[T float32 | float64] struct {
	X    []T
	Y    []int32
	N, D int
	// NormSq, when set, holds each row's ‖u‖² (cached passes: u is fixed,
	// and recomputing it was an n·D pass per step).
	NormSq []float64
	// Groups, with several rows per example, holds the number of rows of
	// each example in the block (which never splits one); else nil.
	Groups []int32
	// W, with weighted rows (Data.W), holds the block's rows' weights.
	W []float64
	// First is the index of the block's first example among the stream's
	// (a Poisson sample's key: PassGradient).
	First int64
}

// Row returns row i.
func (b uBlock[T]) Row(i int) []T { return b.X[i*b.D : (i+1)*b.D] }

// uStream streams the features of the logistic methods (DP-FC,
// DP-Newton), u = [clip_C(x̂), C]/√2 with x̂ = x/‖x‖ (unless features keep
// their scale): a constant coordinate carries the bias and ‖u‖ ≤ C, the
// same map as withBias, computed block by block, in float64 or float32 (T).
// Each call of each is one pass over the data. When all of u fits in
// cacheBytes, the first pass keeps it and later passes read it from
// memory; otherwise every pass streams and memory does not grow with the
// number of rows.
type uStream[T float32 | float64] struct {
	rows      Rows
	m         int
	c         float64
	normalize bool
	buf       []T
	// cache, after a complete first pass, holds all of u and the labels.
	cacheBytes int64
	cache      []T
	labels     []int32
	normSq     []float64
	cached     bool
	// spans are the cached blocks: whole examples, at most uBlockRows
	// rows unless one example has more (groupWalk.next).
	spans []uSpan
}

// uSpan is one cached block: k rows from start, its examples' sizes and
// its rows' weights.
type uSpan struct {
	start, k int
	sizes    []int32
	w        []float64
	first    int64 // the index of its first example
}

func newUStream[T float32 | float64](rows Rows, m int, c float64, normalize bool, cacheBytes int64) *uStream[T] {
	return &uStream[T]{rows: rows, m: m, c: c, normalize: normalize, cacheBytes: cacheBytes}
}

// dim is D+1, the dimension of u.
func (s *uStream[T]) dim() int { return s.rows.Dim() + 1 }

// each calls fn with blocks of at most uBlockRows rows of u, checking
// labels and the context.
func (s *uStream[T]) each(ctx context.Context, fn func(u uBlock[T]) error) error {
	d0, dd := s.rows.Dim(), s.dim()
	if s.cached {
		for _, sp := range s.spans {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(s.block(sp)); err != nil {
				return err
			}
		}
		return nil
	}
	total := s.rows.Len()
	var size T
	if s.cacheBytes > 0 && total*int64(dd)*int64(sizeOf(size)) <= s.cacheBytes && s.cache == nil {
		s.cache = bigSlice[T](int(total) * dd)
		s.labels = make([]int32, total)
		s.normSq = make([]float64, total)
	}
	if s.cache == nil && s.buf == nil {
		s.buf = make([]T, uBlockRows*dd)
	}
	var offset, examples int64
	walk := newGroupWalk(s.rows.Groups(), s.rows.Weights(), int(total))
	block := func(n int, fill func(i int, out []T), y []int32, sizes []int32, w []float64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, c := range y {
			if c < 0 {
				return fmt.Errorf("row %d is unlabeled; training rows need labels", offset+int64(i))
			}
			if int(c) >= s.m {
				return fmt.Errorf("row %d: label %d out of range 0..%d", offset+int64(i), c, s.m-1)
			}
		}
		x := s.buf
		if len(x) < n*dd && s.cache == nil {
			s.buf = make([]T, n*dd) // an example of more than uBlockRows rows
			x = s.buf
		}
		if s.cache != nil {
			if offset+int64(n) > total {
				return fmt.Errorf("more rows than the %d announced", total)
			}
			x = s.cache[offset*int64(dd):]
			copy(s.labels[offset:], y)
			y = s.labels[offset : offset+int64(n)]
		}
		x = x[:n*dd]
		parallelRows(n, dd, func(i int) {
			out := x[i*dd : (i+1)*dd]
			fill(i, out)
			if s.cache != nil {
				var ss float64
				for _, v := range out {
					ss += float64(v) * float64(v)
				}
				s.normSq[offset+int64(i)] = ss
			}
		})
		offset += int64(n)
		first := examples
		if examples += int64(n); sizes != nil {
			examples = first + int64(len(sizes))
		}
		return fn(uBlock[T]{X: x, Y: y, N: n, D: dd, Groups: sizes, W: w, First: first})
	}
	defer func() {
		// Only a complete pass fills the cache.
		s.cached = s.cache != nil && offset == total
		if s.cached {
			// Later passes read blocks of whole examples, at most
			// uBlockRows rows, from the start.
			walk := newGroupWalk(s.rows.Groups(), s.rows.Weights(), int(total))
			var first int64
			for start := 0; start < int(total); {
				k, sizes, w := walk.next(uBlockRows)
				s.spans = append(s.spans, uSpan{start: start, k: k, sizes: sizes, w: w, first: first})
				start += k
				if first += int64(k); sizes != nil {
					first += int64(len(sizes) - k)
				}
			}
		}
	}()
	if r, ok := s.rows.(rows64); ok {
		return r.each64(func(x []float64, y []int32) error {
			return splitBlock(walk, x, y, d0, func(xs []float64, ys []int32, sizes []int32, w []float64) error {
				return block(len(ys), func(i int, out []T) { fillU(xs[i*d0:(i+1)*d0], out, s.c, s.normalize) }, ys, sizes, w)
			})
		})
	}
	return s.rows.Each(func(x []float32, y []int32) error {
		return splitBlock(walk, x, y, d0, func(xs []float32, ys []int32, sizes []int32, w []float64) error {
			return block(len(ys), func(i int, out []T) { fillU(xs[i*d0:(i+1)*d0], out, s.c, s.normalize) }, ys, sizes, w)
		})
	})
}

// splitBlock hands a block of rows (d0 values each) that the walk's
// grouping says ends on an example's last row to fn in parts of whole
// examples of at most uBlockRows rows (groupWalk.next; exactly uBlockRows
// without grouping, the last part shorter).
func splitBlock[In float32 | float64](walk *groupWalk, x []In, y []int32, d0 int, fn func(x []In, y []int32, sizes []int32, w []float64) error) error {
	sizes, w, err := walk.take(len(y))
	if err != nil {
		return err
	}
	parts := newGroupWalk(sizes, w, len(y))
	for start := 0; start < len(y); {
		n, ss, ws := parts.next(uBlockRows)
		if err := fn(x[start*d0:(start+n)*d0], y[start:start+n], ss, ws); err != nil {
			return err
		}
		start += n
	}
	return nil
}

// eachOn is each for work that needs no order among blocks: once u is
// cached, its blocks are shared out in contiguous runs, one per core, and
// fn(w, block) runs on worker w (0 ≤ w < workers()); before that it is
// each, every block on worker 0. Each worker's blocks come in order, so a
// worker's own running sums do not depend on scheduling.
func (s *uStream[T]) eachOn(ctx context.Context, fn func(w int, u uBlock[T]) error) error {
	if !s.cached {
		return s.each(ctx, func(u uBlock[T]) error { return fn(0, u) })
	}
	blocks := len(s.spans)
	workers := s.workers()
	errs := make([]error, workers)
	backend.Parallel(workers, func(w int) {
		for b := w * blocks / workers; b < (w+1)*blocks/workers; b++ {
			if errs[w] = ctx.Err(); errs[w] != nil {
				return
			}
			if errs[w] = fn(w, s.block(s.spans[b])); errs[w] != nil {
				return
			}
		}
	})
	return firstError(errs)
}

// block is a cached block.
func (s *uStream[T]) block(sp uSpan) uBlock[T] {
	dd, start, k := s.dim(), sp.start, sp.k
	return uBlock[T]{X: s.cache[start*dd : (start+k)*dd], Y: s.labels[start : start+k], N: k, D: dd, NormSq: s.normSq[start : start+k], Groups: sp.sizes, W: sp.w, First: sp.first}
}

// workers is the number of workers eachOn uses.
func (s *uStream[T]) workers() int { return runtime.GOMAXPROCS(0) }

// clipMargin shrinks every clipping norm a little, so that rounding (of a
// float64 product, or to float32) can never leave a clipped vector longer
// than the norm its sensitivity is stated with: relative rounding errors
// are below 1e-7 in float32, far below the margin.
const clipMargin = preprocessing.ClipMargin

// fillU writes u = [clip_c(x̂), c]/√2 for one row x into out (len(x)+1).
// The features are clipped to c·clipMargin, so ‖u‖ ≤ c however u is
// rounded.
func fillU[In, Out float32 | float64](x []In, out []Out, c float64, normalize bool) {
	d0 := len(x)
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	norm := math.Sqrt(ss)
	scale := 1.0
	if normalize && norm > 0 {
		scale, norm = 1/norm, 1
	}
	if lim := c * clipMargin; norm > lim {
		scale *= lim / norm
	}
	scale /= math.Sqrt2
	for k, v := range x {
		out[k] = Out(float64(v) * scale)
	}
	out[d0] = Out(c / math.Sqrt2)
}

func sizeOf[T float32 | float64](T) int {
	var v T
	if _, ok := any(v).(float32); ok {
		return 4
	}
	return 8
}

// bigSlice allocates a large slice (huge pages where the kernel has them).
func bigSlice[T float32 | float64](n int) []T {
	var v T
	if _, ok := any(v).(float32); ok {
		return any(bigmem.Float32s(n)).([]T)
	}
	return any(bigmem.Float64s(n)).([]T)
}
