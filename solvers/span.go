package solvers

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpfeat/dpfeat/preprocessing"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
)

// Cluster span (TransformSpec.Clusters): a public whitening followed by
// the span of the public rows' own clusters.
//
// The noise a private method adds to each class's statistic is spread
// evenly over every direction the whitening leaves (DPPL-Mean's class
// sums: norm ≈ σ·√D), while the class means of images like the public
// ones lie near the span of the public rows' cluster centres. Keeping
// only that span — K ≪ D directions, learned from public rows and so
// free — keeps most of the classes' signal and √(K/D) of the noise's
// norm. Measured (#41, bench/results/shift-span.md) with DPPL-Mean on
// the shifted sets: see ChooseAuto.

// publicValuesMax bounds the public rows (times their dimension) that
// the span's clustering holds in memory and the distilled head's pass
// reads: a deterministic stride through the file beyond it (2^25 values,
// 256 MB as float64; at D = 2048, 16,384 rows). Both read the same rows.
const publicValuesMax = 1 << 25

// capRows is src, or every stride-th row of it (strideSource) when all
// its rows, width values each, would exceed publicValuesMax.
func capRows(src PublicSource, width int) PublicSource {
	if stride := (src.Rows()*width + publicValuesMax - 1) / publicValuesMax; stride > 1 {
		return strideSource{src, stride}
	}
	return src
}

// spanIterations is the number of Lloyd steps of the clustering (it
// stops earlier once no row changes cluster).
const spanIterations = 25

// spanSeed seeds the clustering's k-means++ start: the span is a function
// of the public rows alone, the same on every run.
const spanSeed = 0x5eed5a11

// clusterSpan replaces t's projection P (R×D) by Q·P, Q (K'×R) an
// orthonormal basis of the span of k centres of spherical k-means on the
// public rows as t maps them and renormalised — the rows the method
// would see — and sets t.Dims to K' ≤ k (fewer where centres are
// dependent). k is below R and the public rows' count (learnTransform
// keeps the whitening whole otherwise). No release: the rows are
// public.
func clusterSpan(ctx context.Context, src PublicSource, t *preprocessing.Transform, k int, o *Options) error {
	R := t.OutDim(t.In)
	u, n, err := spanRows(ctx, progressSource{capRows(src, R), "transform: the span's rows", o.progress}, t)
	if err != nil {
		return err
	}
	if n < k {
		return fmt.Errorf("transform: %d public rows cannot form %d clusters", n, k)
	}
	centres := sphericalKMeans(ctx, u, n, R, k, o)
	if err := ctx.Err(); err != nil {
		return err
	}
	q := orthonormalRows(centres, k, R)
	if len(q) == 0 {
		return fmt.Errorf("transform: the public rows' clusters span no direction")
	}
	kk := len(q) / R
	proj := t.Projection // whiten's, R×D (principal: never nil)
	out := make([]float64, kk*t.In)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas64.General{Rows: kk, Cols: R, Stride: R, Data: q},
		blas64.General{Rows: R, Cols: t.In, Stride: t.In, Data: proj},
		0, blas64.General{Rows: kk, Cols: t.In, Stride: t.In, Data: out})
	t.Projection, t.Dims = out, kk
	roundStored(t)
	return t.Check(t.In)
}

// spanRows maps the rows of src (the public rows, at most
// publicValuesMax values of them: capRows) through t and renormalises
// them (transformSource), and returns the nonzero ones (n×R, row-major).
func spanRows(ctx context.Context, src PublicSource, t *preprocessing.Transform) ([]float64, int, error) {
	R := t.OutDim(src.Dim())
	u := make([]float64, 0, src.Rows()*R)
	err := transformSource{src, t}.Each(func(block []float64, n int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if row := block[i*R : (i+1)*R]; preprocessing.Norm(row) > 0 {
				u = append(u, row...)
			}
		}
		return nil
	})
	return u, len(u) / R, err
}

// strideSource is every stride-th row of src (rows 0, stride, 2·stride, …).
type strideSource struct {
	src    PublicSource
	stride int
}

func (s strideSource) Dim() int  { return s.src.Dim() }
func (s strideSource) Rows() int { return (s.src.Rows() + s.stride - 1) / s.stride }
func (s strideSource) Each(fn func(block []float64, rows int) error) error {
	D := s.src.Dim()
	var buf []float64
	seen := 0
	return s.src.Each(func(block []float64, rows int) error {
		buf = buf[:0]
		for i := 0; i < rows; i++ {
			if (seen+i)%s.stride == 0 {
				buf = append(buf, block[i*D:(i+1)*D]...)
			}
		}
		seen += rows
		if len(buf) == 0 {
			return nil
		}
		return fn(buf, len(buf)/D)
	})
}

// normalize scales x to unit norm in place; false for a zero row.
func normalize(x []float64) bool {
	var s float64
	for _, v := range x {
		s += v * v
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return false
	}
	f := 1 / math.Sqrt(s)
	for i := range x {
		x[i] *= f
	}
	return true
}

// sphericalKMeans clusters n unit rows u (n×R) into k by cosine
// similarity: a k-means++ start (seeded by spanSeed), then Lloyd steps,
// each centre the renormalised sum of its rows; a centre left without
// rows restarts at the row least similar to its own centre. It returns
// the k unit centres (k×R).
func sphericalKMeans(ctx context.Context, u []float64, n, R, k int, o *Options) []float64 {
	rng := rand.New(rand.NewPCG(spanSeed, uint64(k)))
	c := make([]float64, k*R)
	// k-means++: each next centre drawn with probability ∝ its row's
	// distance² to the nearest centre so far, 2 − 2·cos.
	d2 := make([]float64, n)
	for i := range d2 {
		d2[i] = math.Inf(1)
	}
	next := rng.IntN(n)
	for j := 0; j < k; j++ {
		copy(c[j*R:(j+1)*R], u[next*R:(next+1)*R])
		var total float64
		for i := 0; i < n; i++ {
			d := math.Max(2-2*floats.Dot(u[i*R:(i+1)*R], c[j*R:(j+1)*R]), 0)
			d2[i] = math.Min(d2[i], d)
			total += d2[i]
		}
		if total == 0 {
			next = rng.IntN(n)
			continue
		}
		r := rng.Float64() * total
		for next = 0; next < n-1; next++ {
			if r -= d2[next]; r < 0 {
				break
			}
		}
	}
	assign := make([]int, n)
	for i := range assign {
		assign[i] = -1
	}
	scores := make([]float64, n*k)
	best := make([]float64, n)
	sums := make([]float64, k*R)
	for it := 0; it < spanIterations && ctx.Err() == nil; it++ {
		o.progress("transform: clustering the public rows, step %d/%d", it+1, spanIterations)
		blas64.Gemm(blas.NoTrans, blas.Trans, 1,
			blas64.General{Rows: n, Cols: R, Stride: R, Data: u},
			blas64.General{Rows: k, Cols: R, Stride: R, Data: c},
			0, blas64.General{Rows: n, Cols: k, Stride: k, Data: scores})
		changed := 0
		for i := 0; i < n; i++ {
			s := scores[i*k : (i+1)*k]
			a := 0
			for j, v := range s {
				if v > s[a] {
					a = j
				}
			}
			if a != assign[i] {
				assign[i], changed = a, changed+1
			}
			best[i] = s[a]
		}
		if changed == 0 {
			break
		}
		clear(sums)
		for i, a := range assign {
			floatsAdd(sums[a*R:(a+1)*R], u[i*R:(i+1)*R])
		}
		for j := 0; j < k; j++ {
			cj := sums[j*R : (j+1)*R]
			if !normalize(cj) {
				// No row drew this centre: restart it at the row its own
				// centre fits worst (once taken, that row's fit is 1).
				w := 0
				for i := range best {
					if best[i] < best[w] {
						w = i
					}
				}
				copy(cj, u[w*R:(w+1)*R])
				best[w] = 1
			}
		}
		copy(c, sums)
	}
	return c
}

// orthonormalRows returns an orthonormal basis (rows, K'×R) of the span of
// the k rows of a (k×R), by modified Gram–Schmidt applied twice, dropping
// rows whose remainder is below 1e-8 of their norm.
func orthonormalRows(a []float64, k, R int) []float64 {
	var q []float64
	v := make([]float64, R)
	for j := 0; j < k; j++ {
		copy(v, a[j*R:(j+1)*R])
		n0 := math.Sqrt(floats.Dot(v, v))
		if n0 == 0 {
			continue
		}
		for range 2 {
			for i := 0; i < len(q)/R; i++ {
				qi := q[i*R : (i+1)*R]
				p := floats.Dot(v, qi)
				for l := range v {
					v[l] -= p * qi[l]
				}
			}
		}
		if math.Sqrt(floats.Dot(v, v)) < 1e-8*n0 {
			continue
		}
		normalize(v)
		q = append(q, v...)
	}
	return q
}

// progressSource is src, reporting after each block how many of its rows
// a pass has read (Options.progress: a long pass over public rows, such
// as the whitening's, the span's or the distilled head's at D = 2048,
// shows it is moving). The counts are the public file's.
type progressSource struct {
	src      PublicSource
	label    string
	progress func(format string, args ...any)
}

func (s progressSource) Dim() int  { return s.src.Dim() }
func (s progressSource) Rows() int { return s.src.Rows() }
func (s progressSource) Each(fn func(block []float64, rows int) error) error {
	seen, total := 0, s.src.Rows()
	return s.src.Each(func(block []float64, rows int) error {
		if err := fn(block, rows); err != nil {
			return err
		}
		seen += rows
		s.progress("%s: %d/%d public rows", s.label, seen, total)
		return nil
	})
}
