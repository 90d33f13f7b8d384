package solvers

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/dpfeat/dpfeat/internal/backend"
	"github.com/dpfeat/dpfeat/internal/bigmem"
	"github.com/dpfeat/dpfeat/internal/phases"
)

// Rows streams training rows as stored (float32, before preprocessing) with
// their labels; sufficient statistics are computed from it in one pass, so
// memory does not grow with the number of rows.
type Rows interface {
	Dim() int
	Len() int64
	// Each calls fn with consecutive blocks: x holds len(y)·Dim() values.
	// With Groups, a block never splits an example's rows.
	Each(fn func(x []float32, y []int32) error) error
	// Groups returns nil when every row is its own example; else the
	// number of rows of each example, in the order Each hands them out
	// (an example's rows consecutive, sharing its label unless weighted:
	// groups.go).
	Groups() []int32
	// Weights returns nil when every row weighs 1; else each row's weight
	// within its example (Data.W), in the order Each hands them out.
	Weights() []float64
}

type dataRows struct{ d *Data }

// DataRows streams an in-memory data set (converted to float32 blocks).
func DataRows(d *Data) Rows { return dataRows{d} }

func (r dataRows) Dim() int           { return r.d.D }
func (r dataRows) Len() int64         { return int64(r.d.N) }
func (r dataRows) Groups() []int32    { return r.d.Groups }
func (r dataRows) Weights() []float64 { return r.d.W }
func (r dataRows) Each(fn func(x []float32, y []int32) error) error {
	const block = 4096
	var buf []float32
	walk := newGroupWalk(r.d.Groups, nil, r.d.N)
	for start := 0; start < r.d.N; {
		n, _, _ := walk.next(block)
		if cap(buf) < n*r.d.D {
			buf = make([]float32, n*r.d.D)
		}
		for i, v := range r.d.X[start*r.d.D : (start+n)*r.d.D] {
			buf[i] = float32(v)
		}
		if err := fn(buf[:n*r.d.D], r.d.Y[start:start+n]); err != nil {
			return err
		}
		start += n
	}
	return nil
}

// StatsOptions says which statistics to accumulate and how rows are
// preprocessed first: unit L2 norm (Normalize), average pooling by Pool,
// clipping to L2 norm Clip.
type StatsOptions struct {
	Normalize bool
	Pool      int
	Clip      float64
	// Gram asks for G = Σ xxᵀ over all rows.
	Gram bool
	// ClassGram lists the classes whose Σ_{i∈c} xxᵀ to accumulate (a chunk,
	// when all M·D² do not fit in memory).
	ClassGram []int
	// SumSquares asks for Σ x∘x, the per-coordinate sums of squares (G's
	// diagonal, without G).
	SumSquares bool
}

// Stats are sufficient statistics of the (preprocessed) rows: per-class
// counts and sums, and the requested Gram matrices (D×D, row-major, both
// triangles), all in float64.
type Stats struct {
	D         int
	Counts    []int64
	Sums      []float64
	Gram      []float64
	ClassGram map[int][]float64
	// SumSquares is Σ x∘x over all rows (StatsOptions.SumSquares).
	SumSquares []float64
}

// Add adds the statistics of other rows, accumulated with the same
// options, to s: every statistic is a sum over rows, so the statistics of
// parts (shards) add up to the whole's.
func (s *Stats) Add(o *Stats) error {
	if s.D != o.D || len(s.Counts) != len(o.Counts) || len(s.Gram) != len(o.Gram) || len(s.SumSquares) != len(o.SumSquares) || len(s.ClassGram) != len(o.ClassGram) {
		return fmt.Errorf("statistics of different shapes (D %d and %d, %d and %d classes)", s.D, o.D, len(s.Counts), len(o.Counts))
	}
	for i, c := range o.Counts {
		s.Counts[i] += c
	}
	addTo := func(a, b []float64) {
		for i, v := range b {
			a[i] += v
		}
	}
	addTo(s.Sums, o.Sums)
	addTo(s.Gram, o.Gram)
	addTo(s.SumSquares, o.SumSquares)
	for c, g := range o.ClassGram {
		mine, ok := s.ClassGram[c]
		if !ok || len(mine) != len(g) {
			return fmt.Errorf("statistics with different class Grams (class %d)", c)
		}
		addTo(mine, g)
	}
	return nil
}

// AccumulateWith is the one-pass methods' way to their statistics:
// computed elsewhere when o.Remote is set (e.g. over a dataset's shards),
// else Accumulate over rows.
func AccumulateWith(ctx context.Context, o *Options, rows Rows, m int, opt StatsOptions) (*Stats, error) {
	if o.Remote != nil {
		return o.Remote.Accumulate(ctx, m, opt, o.learned)
	}
	return Accumulate(ctx, rows, m, opt)
}

// classBufRows is how many rows of one class are gathered before they go
// into that class's Gram in one SYRK: in a shuffled file a block holds a
// handful of rows per class, and rank-1 updates of a D×D matrix would be
// memory-bound (at D = 1664 each touches 11 MB).
const classBufRows = 256

// gramAcc accumulates the Gram matrix XᵀX of float32 rows in float64 (a
// DSYRK per block of rows), with an optional buffer of pending rows. With
// ways > 1 a block's rows are split into that many parts, each SYRKed in
// parallel into its own accumulator (for a Gram alone in its pass: BLAS
// itself runs single-threaded, see internal/backend).
//
// Why float64 (#15 item 9): the released statistic's sensitivity must hold
// for the sum as computed. Products of float32 values are exact in
// float64, so the only error is the summation's, at most γ_n·Σ‖x‖² ≤
// γ_n·n·C² in Frobenius norm (γ_n = n·2⁻⁵³/(1 − n·2⁻⁵³), Higham 2002
// §3.1, any order); the releases add it for both neighbours to the
// sensitivity (accounting.SumSlack): 2·10⁻⁷ relative at n = 30,000. The
// former float32 blocks of 4,096 rows had the bound γ₄₀₉₆·n·C² ≈ 2.4·10⁻⁴·
// n·C² — several times C² itself — and a measured excess of 4.7·10⁻⁴·C².
type gramAcc struct {
	d       int
	acc     [][]float64
	conv    [][]float64 // float64 copies of each part's rows
	pending []float32
	// scratch, when set, lends the float64 copy (one buffer per worker
	// for many accumulators, instead of one per accumulator).
	scratch chan []float64
}

func newGramAcc(d, ways int) *gramAcc {
	g := &gramAcc{d: d, acc: make([][]float64, max(1, ways)), conv: make([][]float64, max(1, ways))}
	for w := range g.acc {
		g.acc[w] = bigmem.Float64s(d * d)
	}
	return g
}

// classAccs returns accumulators for k classes (one way each) whose D×D
// totals and pending rows are cut from two slabs — allocated at once and
// backed by huge pages where the kernel allows: 100 classes at D = 512 as
// separate 2 MiB allocations took ~90,000 page faults, a second of system
// time at 200,000 rows — sharing one float64 copy buffer per core.
func classAccs(k, d int) []*gramAcc {
	accs := bigmem.Float64s(k * d * d)
	pend := bigmem.Float32s(k * classBufRows * d)
	scratch := make(chan []float64, runtime.GOMAXPROCS(0))
	for range cap(scratch) {
		scratch <- nil
	}
	out := make([]*gramAcc, k)
	for a := range out {
		out[a] = &gramAcc{d: d, acc: [][]float64{accs[a*d*d : (a+1)*d*d : (a+1)*d*d]}, conv: make([][]float64, 1),
			pending: pend[a*classBufRows*d : a*classBufRows*d : (a+1)*classBufRows*d], scratch: scratch}
	}
	return out
}

// push buffers one row and adds the buffer when it is full.
func (g *gramAcc) push(row []float32) {
	if g.pending == nil {
		g.pending = make([]float32, 0, classBufRows*g.d)
	}
	g.pending = append(g.pending, row...)
	if len(g.pending) == cap(g.pending) {
		g.drain()
	}
}

func (g *gramAcc) drain() {
	if len(g.pending) > 0 {
		g.add(g.pending, len(g.pending)/g.d)
		g.pending = g.pending[:0]
	}
}

// add accumulates XᵀX of the rows×d block x (upper triangle).
func (g *gramAcc) add(x []float32, rows int) { g.addScaled(x, rows, nil) }

// addScaled accumulates Σᵢ sᵢ²·xᵢxᵢᵀ, each row scaled by s (nil: 1) as it
// is converted to float64: with s = √(1/k), an example's k rows add the
// mean of their Grams.
func (g *gramAcc) addScaled(x []float32, rows int, s []float64) {
	if rows == 0 {
		return
	}
	ways := min(len(g.acc), max(1, rows/64))
	syrk := func(w int) {
		lo, hi := w*rows/ways, (w+1)*rows/ways
		n := (hi - lo) * g.d
		conv := g.conv[w]
		if g.scratch != nil {
			conv = <-g.scratch
			defer func() { g.scratch <- conv }()
		}
		if cap(conv) < n {
			conv = make([]float64, max(n, classBufRows*g.d))
		}
		if g.scratch == nil {
			g.conv[w] = conv
		}
		buf := conv[:n]
		for i, v := range x[lo*g.d : hi*g.d] {
			buf[i] = float64(v)
		}
		if s != nil {
			for i := lo; i < hi; i++ {
				for k := range buf[(i-lo)*g.d : (i-lo+1)*g.d] {
					buf[(i-lo)*g.d+k] *= s[i]
				}
			}
		}
		a := blas64.General{Rows: hi - lo, Cols: g.d, Stride: g.d, Data: buf}
		c := blas64.Symmetric{Uplo: blas.Upper, N: g.d, Stride: g.d, Data: g.acc[w]}
		blas64.Syrk(blas.Trans, 1, a, 1, c)
	}
	if ways == 1 {
		syrk(0)
	} else {
		backend.Parallel(ways, syrk)
	}
}

// result adds what is pending, sums the parts and mirrors the upper
// triangle.
func (g *gramAcc) result() []float64 {
	g.drain()
	g.pending = nil
	out := g.acc[0]
	for _, acc := range g.acc[1:] {
		for i := 0; i < g.d; i++ {
			for j := i; j < g.d; j++ {
				out[i*g.d+j] += acc[i*g.d+j]
			}
		}
	}
	backend.MirrorUpper(out, g.d)
	g.acc, g.conv = nil, nil
	return out
}

// Accumulate computes statistics of m classes in one pass over rows:
// preprocessing and grouping by class happen in float32 blocks, Gram
// updates are float32 SYRKs added into float64 totals, the classes' in
// parallel; when every class's Gram is asked for, G is their sum. Memory: the
// requested D×D accumulators (12 bytes per entry) plus one block.
func Accumulate(ctx context.Context, rows Rows, m int, opt StatsOptions) (*Stats, error) {
	d0 := rows.Dim()
	d := d0
	if opt.Pool > 1 {
		d = (d0 + opt.Pool - 1) / opt.Pool
	}
	st := &Stats{D: d, Counts: make([]int64, m), Sums: make([]float64, m*d), ClassGram: map[int][]float64{}}
	if opt.SumSquares {
		st.SumSquares = make([]float64, d)
	}
	classAcc := make([]*gramAcc, m)
	var withAcc []int
	seen := make([]bool, m)
	for _, c := range opt.ClassGram {
		if c < 0 || c >= m {
			return nil, fmt.Errorf("class %d out of range 0..%d", c, m-1)
		}
		if !seen[c] {
			seen[c] = true
			withAcc = append(withAcc, c)
		}
	}
	for a, acc := range classAccs(len(withAcc), d) {
		classAcc[withAcc[a]] = acc
	}
	// With every class's Gram at hand, G is their sum: no SYRK of its own.
	var gram *gramAcc
	gramFromClasses := opt.Gram && len(withAcc) == m
	if opt.Gram && !gramFromClasses {
		gram = newGramAcc(d, runtime.GOMAXPROCS(0))
	}
	var work []float32
	var offset int64
	rowsOf := make([][]int32, m)
	// With several rows per example each row weighs its share f (1/k, or
	// W_r/ΣW: groups.go): its preprocessed copy is scaled by √f, so the
	// Grams get the example's weighted mean of xxᵀ, and the sums take
	// another √f; an example counts once, at its first row.
	walk := newGroupWalk(rows.Groups(), rows.Weights(), int(rows.Len()))
	timing := phases.NewSplit("read", "accumulate")
	err := rows.Each(func(x []float32, y []int32) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		defer timing.Inner()()
		n := len(y)
		if cap(work) < n*d {
			work = make([]float32, n*d)
		}
		work = work[:n*d]
		for i, c := range y {
			if c < 0 {
				return fmt.Errorf("row %d is unlabeled; training rows need labels", offset+int64(i))
			}
			if int(c) >= m {
				return fmt.Errorf("row %d: label %d out of range 0..%d", offset+int64(i), c, m-1)
			}
		}
		sizes, wts, err := walk.take(n)
		if err != nil {
			return err
		}
		root := rootWeights(sizes, wts, n)
		parallelRows(n, d, func(i int) {
			f := 1.0
			if root != nil {
				f = root[i]
			}
			prep32(x[i*d0:(i+1)*d0], work[i*d:(i+1)*d], opt, f)
		})
		for c := range rowsOf {
			rowsOf[c] = rowsOf[c][:0]
		}
		for i, c := range y {
			rowsOf[c] = append(rowsOf[c], int32(i))
		}
		for i := range len(st.SumSquares) / d * n {
			row := work[i*d : (i+1)*d]
			for k, v := range row {
				st.SumSquares[k] += float64(v) * float64(v)
			}
		}
		// Each class's count, sum and accumulator are touched by one
		// worker, its rows in file order.
		eachGroup(sizes, 0, n, func(a, _ int) { st.Counts[y[a]]++ })
		backend.Parallel(m, func(c int) {
			sum := st.Sums[c*d : (c+1)*d]
			for _, i := range rowsOf[c] {
				row := work[int(i)*d : (int(i)+1)*d]
				if root == nil {
					for k, v := range row {
						sum[k] += float64(v)
					}
				} else {
					f := root[i]
					for k, v := range row {
						sum[k] += float64(v) * f
					}
				}
				if classAcc[c] != nil {
					classAcc[c].push(row)
				}
			}
		})
		if gram != nil {
			gram.add(work, n)
		}
		offset += int64(n)
		return nil
	})
	timing.Done()
	if err != nil {
		return nil, err
	}
	defer phases.Start("accumulate")()
	if gram != nil {
		st.Gram = gram.result()
	}
	grams := make([][]float64, len(withAcc))
	backend.Parallel(len(withAcc), func(a int) {
		grams[a] = classAcc[withAcc[a]].result()
	})
	for a, c := range withAcc {
		st.ClassGram[c] = grams[a]
	}
	if gramFromClasses {
		st.Gram = bigmem.Float64s(d * d)
		for _, c := range withAcc {
			for i, v := range st.ClassGram[c] {
				st.Gram[i] += v
			}
		}
	}
	return st, nil
}

// parallelRows calls fn(i) for rows 0..n−1 of a block of width d, in
// parallel parts of at least 32k values.
func parallelRows(n, d int, fn func(i int)) {
	parts := max(1, min(runtime.GOMAXPROCS(0), n*d>>15, n))
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// prep32 applies normalisation, pooling and clipping to one row, and
// then scales it by f (√ of its weight; 1 for a row that is its own
// example). Without pooling the scale is known from one pass (normalised
// rows have norm 1) and applied in a second.
func prep32(in, out []float32, opt StatsOptions, f float64) {
	var ss float64
	for _, v := range in {
		ss += float64(v) * float64(v)
	}
	norm := math.Sqrt(ss)
	scale := 1.0
	if opt.Normalize && norm > 0 {
		scale, norm = 1/norm, 1
	}
	if opt.Pool > 1 {
		for g := range out {
			lo, hi := g*opt.Pool, min((g+1)*opt.Pool, len(in))
			var s float32
			for _, v := range in[lo:hi] {
				s += v
			}
			out[g] = float32(scale) * s / float32(hi-lo)
		}
		if opt.Clip > 0 {
			// Pooling changes the norm: measure it again.
			ss = 0
			for _, v := range out {
				ss += float64(v) * float64(v)
			}
			if lim := opt.Clip * clipMargin; math.Sqrt(ss) > lim {
				s := float32(lim / math.Sqrt(ss))
				for i := range out {
					out[i] *= s
				}
			}
		}
		if f != 1 {
			for i := range out {
				out[i] *= float32(f)
			}
		}
		return
	}
	// To C·clipMargin: float32 rounding cannot take the norm above C.
	if lim := opt.Clip * clipMargin; opt.Clip > 0 && norm > lim {
		scale *= lim / norm
	}
	s := float32(scale * f)
	for i, v := range in {
		out[i] = s * v
	}
}

// classBytes is the memory of one class's Gram accumulator and row
// buffer (the float64 copies are per core: classAccs).
func classBytes(d int) int64 { return int64(d)*int64(d)*8 + classBufRows*int64(d)*4 }

// ClassChunks splits m classes into chunks whose D×D accumulators (8 bytes
// per entry, float64) and row buffers fit in budget bytes,
// always at least one class per chunk.
func ClassChunks(m, d int, budget int64) [][]int {
	k := int(max(1, budget/classBytes(d)))
	var out [][]int
	for start := 0; start < m; start += k {
		var c []int
		for j := start; j < min(m, start+k); j++ {
			c = append(c, j)
		}
		out = append(out, c)
	}
	return out
}
