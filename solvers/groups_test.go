package solvers

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
)

// withViews returns d with every row repeated as k noisy views (its
// example's rows consecutive, sharing its label) and the grouping.
func withViews(d *Data, sizes func(i int) int, seed uint64) *Data {
	r := rand.New(rand.NewPCG(seed, 7))
	out := &Data{D: d.D, M: d.M}
	for i := 0; i < d.N; i++ {
		k := sizes(i)
		for v := 0; v < k; v++ {
			row := append([]float64(nil), d.Row(i)...)
			if v > 0 {
				for j := range row {
					row[j] += 0.3 * r.NormFloat64()
				}
				Preprocessing{Normalize: true}.Apply(row)
			}
			out.X = append(out.X, row...)
			out.Y = append(out.Y, d.Y[i])
		}
		out.Groups = append(out.Groups, int32(k))
	}
	out.N = len(out.Y)
	return out
}

func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// TestSingletonGroupsFitTheSameModel (#22 acceptance): a grouping of one
// row per example takes exactly the single-row arithmetic — every method,
// in memory and streamed, cached and not, sampled and full-batch, with a
// transform — so a multi-view file of K = 1 fits the single-view model
// bit for bit.
func TestSingletonGroupsFitTheSameModel(t *testing.T) {
	d := blobs(2600, 6, 3, 21) // more than one block of uBlockRows
	g := *d
	g.Groups = make([]int32, d.N)
	for i := range g.Groups {
		g.Groups[i] = 1
	}
	type variant struct {
		name string
		opt  func(*Options)
	}
	variants := []variant{
		{"", func(*Options) {}},
		{"sampled", func(o *Options) { o.Params = map[string]float64{"batch": 300, "steps": 5} }},
		{"pca", func(o *Options) { o.Transform = TransformSpec{Kind: TransformPCA, Dims: 4, Share: 0.2} }},
		{"uncached", func(o *Options) { o.MemoryBudget = 1 << 16 }},
	}
	for _, m := range Methods() {
		for _, v := range variants {
			if v.name == "sampled" && m.Name != "dpsgd" || v.name == "pca" && !m.Private || m.Pure {
				continue
			}
			opts := func() Options {
				o := Options{Privacy: accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(5)}}
				if !m.Private {
					o.Privacy.Epsilon = math.Inf(1)
				}
				v.opt(&o)
				if o.MemoryBudget > 0 && !slices.Contains(m.Reads, OptMemory) {
					o.MemoryBudget = 0
				}
				return o
			}
			a, err := Fit(context.Background(), m.Name, d, opts())
			if err != nil {
				t.Fatalf("%s %s: %v", m.Name, v.name, err)
			}
			b, err := Fit(context.Background(), m.Name, &g, opts())
			if err != nil {
				t.Fatalf("%s %s grouped: %v", m.Name, v.name, err)
			}
			if !sameBits(a.W, b.W) || !sameBits(a.B, b.B) || !sameBits(a.Prototypes, b.Prototypes) {
				t.Errorf("%s %s: singleton groups fit another model", m.Name, v.name)
			}
			if Streams(m.Name) {
				a, err := FitRows(context.Background(), m.Name, batchedRows{d, 700}, 3, opts())
				if err != nil {
					t.Fatal(err)
				}
				b, err := FitRows(context.Background(), m.Name, batchedRows{&g, 700}, 3, opts())
				if err != nil {
					t.Fatal(err)
				}
				if !sameBits(a.W, b.W) || !sameBits(a.B, b.B) {
					t.Errorf("%s %s streamed: singleton groups fit another model", m.Name, v.name)
				}
			}
		}
	}
}

// TestExampleGradientIsClippedMean (#22 acceptance): with several rows
// per example, the clipped gradient sum is Σ_e clip_C((1/k)·Σ_v ∇ℓ_v),
// formed naively here — whole (DP-LP) and in blocks (the gradient passes
// of DP-FC and DP-SGD) — and unclipped (DP-Newton, logreg) every row weighs 1/k.
func TestExampleGradientIsClippedMean(t *testing.T) {
	d := withViews(blobs(700, 4, 3, 3), func(i int) int { return 1 + i%5 }, 1)
	u, theta, z := gradientCase(d)
	for _, clip := range []float64{0, 0.05, 0.5, 100} {
		got := clippedGradientSum(u, z, clip)
		want := make([]float64, len(theta))
		at := 0
		for _, k := range d.Groups {
			ge := make([]float64, len(theta))
			for i := at; i < at+int(k); i++ {
				for j, v := range exampleGradient(u, theta, i) {
					ge[j] += v / float64(k)
				}
			}
			f := 1.0
			if clip > 0 {
				f = math.Min(1, clip*clipMargin/l2(ge))
			}
			for j := range want {
				want[j] += f * ge[j]
			}
			at += int(k)
		}
		checkGradients(t, u, theta, clip, got, want)
	}
}

// blockGradientSum is the gradient passes' clipped gradient sum of u at θ
// (gradientBlock), in blocks of at most 300 rows of whole examples.
func blockGradientSum(u *Data, theta []float64, clip float64) []float64 {
	sum := make([]float64, len(theta))
	z := make([]float64, u.N*u.M)
	walk := newGroupWalk(u.Groups, u.W, u.N)
	for start := 0; start < u.N; {
		n, sizes, w := walk.next(300)
		b := &Data{X: u.X[start*u.D : (start+n)*u.D], Y: u.Y[start : start+n], N: n, D: u.D, M: u.M, Groups: sizes, W: w}
		gradientBlock(b, theta, clip, z[:n*u.M], sum)
		start += n
	}
	return sum
}

// checkGradients compares a clipped gradient sum (got) and the gradient
// passes' one by blocks at the same θ and clip with a naive computation,
// within 1e-10 relative.
func checkGradients(t *testing.T, u *Data, theta []float64, clip float64, got, want []float64) {
	t.Helper()
	blocks := blockGradientSum(u, theta, clip)
	for j := range want {
		if math.Abs(got[j]-want[j]) > 1e-10*math.Max(1, math.Abs(want[j])) {
			t.Fatalf("clip %v: gradient[%d] = %v, naive %v", clip, j, got[j], want[j])
		}
		if clip > 0 && math.Abs(blocks[j]-want[j]) > 1e-10*math.Max(1, math.Abs(want[j])) {
			t.Fatalf("clip %v: gradient[%d] by blocks = %v, naive %v", clip, j, blocks[j], want[j])
		}
	}
}

// TestAccumulateAveragesViews: the sufficient statistics of grouped rows
// are sums over examples of the mean of their rows' terms; counts count
// examples.
func TestAccumulateAveragesViews(t *testing.T) {
	d := withViews(blobs(900, 5, 3, 8), func(i int) int { return 1 + i%4 }, 2)
	for _, pool := range []int{1, 2} {
		opt := StatsOptions{Gram: true, ClassGram: []int{0, 1, 2}, Clip: 0.5, Normalize: true, Pool: pool, SumSquares: true}
		st, err := Accumulate(context.Background(), dataRows{d}, 3, opt)
		if err != nil {
			t.Fatal(err)
		}
		dd := st.D
		G := make([]float64, dd*dd)
		sums := make([]float64, 3*dd)
		counts := make([]int64, 3)
		at := 0
		for _, k := range d.Groups {
			w := 1 / float64(k)
			y := int(d.Y[at])
			counts[y]++
			for i := at; i < at+int(k); i++ {
				x := Preprocessing{Normalize: true, Pool: pool, Clip: 0.5}.Apply(append([]float64(nil), d.Row(i)...))
				for a := range x {
					sums[y*dd+a] += w * x[a]
					for b := range x {
						G[a*dd+b] += w * x[a] * x[b]
					}
				}
			}
			at += int(k)
		}
		for i := range G {
			if math.Abs(st.Gram[i]-G[i]) > 1e-5*math.Max(1, math.Abs(G[i])) {
				t.Fatalf("pool %d: G[%d] = %v, naive %v", pool, i, st.Gram[i], G[i])
			}
		}
		for i := range sums {
			if math.Abs(st.Sums[i]-sums[i]) > 1e-4 {
				t.Fatalf("pool %d: sum %d = %v, naive %v", pool, i, st.Sums[i], sums[i])
			}
		}
		if !slices.Equal(st.Counts, counts) || st.Counts[0] != 300 {
			t.Errorf("pool %d: counts %v, want %v", pool, st.Counts, counts)
		}
	}
}

// TestAnExampleMovesStatisticsByItsSensitivity: adding one example as k
// views — each at the clipping norm, pointing anywhere — moves the Gram and
// the class sums by at most what one row at the norm would (C², C): the
// sensitivity the releases are calibrated with, whatever k.
func TestAnExampleMovesStatisticsByItsSensitivity(t *testing.T) {
	const D = 6
	base := withViews(blobs(400, D, 2, 12), func(int) int { return 3 }, 3)
	opt := StatsOptions{Gram: true, ClassGram: []int{0, 1}, Normalize: true, Clip: 1}
	st, err := Accumulate(context.Background(), dataRows{base}, 2, opt)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	for _, k := range []int{1, 2, 8, 32} {
		nb := &Data{X: append([]float64(nil), base.X...), Y: append([]int32(nil), base.Y...), D: D, M: 2, Groups: append(append([]int32(nil), base.Groups...), int32(k))}
		for v := 0; v < k; v++ {
			row := make([]float64, D)
			row[v%D] = 1 // views along different axes: the mean is shorter
			if v%2 == 1 {
				for j := range row {
					row[j] = r.NormFloat64()
				}
			}
			nb.X = append(nb.X, row...)
			nb.Y = append(nb.Y, 0)
		}
		nb.N = len(nb.Y)
		if dg, ds, dc := statsShift(t, st, nb, opt); dg > 1+1e-9 || ds > 1+1e-9 || dc != 1 {
			t.Errorf("k = %d: ‖ΔG‖ = %v, ‖Δsums‖ = %v, count +%d", k, dg, ds, dc)
		}
	}
}

// fitEveryMethod fits every method of this package to grouped data of n
// examples: each reaches the training accuracy floor, and the private
// ones state n in their guarantee.
func fitEveryMethod(t *testing.T, d *Data, n int, floor float64) {
	t.Helper()
	for _, m := range Methods() {
		if m.Pure {
			continue
		}
		o := Options{Privacy: accounting.ReleaseOptions{Epsilon: 2, Delta: 1e-5, Noise: accounting.SeededNoise(1)}}
		if !m.Private {
			o.Privacy.Epsilon = math.Inf(1)
		}
		res, err := Fit(context.Background(), m.Name, d, o)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if acc := accuracy(res, d); acc < floor {
			t.Errorf("%s: training accuracy %.2f", m.Name, acc)
		}
		if m.Private && !slices.ContainsFunc(res.Guarantee.Assumptions(), func(a accounting.Assumption) bool { return a.Kind == accounting.AssumeN && a.N == n }) {
			t.Errorf("%s: the guarantee does not state n = %d examples: %q", m.Name, n, res.Guarantee.Public)
		}
	}
}

// statsShift accumulates nb as st was accumulated and returns how far the
// statistics moved: ‖ΔG‖, ‖Δsums‖ (joint over the classes) and class 0's
// count.
func statsShift(t *testing.T, st *Stats, nb *Data, opt StatsOptions) (dg, ds float64, dc int64) {
	t.Helper()
	st2, err := Accumulate(context.Background(), dataRows{nb}, nb.M, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i := range st.Gram {
		dg += (st2.Gram[i] - st.Gram[i]) * (st2.Gram[i] - st.Gram[i])
	}
	for i := range st.Sums {
		ds += (st2.Sums[i] - st.Sums[i]) * (st2.Sums[i] - st.Sums[i])
	}
	return math.Sqrt(dg), math.Sqrt(ds), st2.Counts[0] - st.Counts[0]
}

// TestViewsFitEveryMethod: every method fits grouped rows, in memory and
// streamed in blocks that the grouping cuts; n is the number of examples;
// the streamed and in-memory fits of a logistic method agree.
func TestViewsFitEveryMethod(t *testing.T) {
	d := withViews(blobs(600, 5, 3, 9), func(i int) int { return 1 + i%6 }, 4)
	fitEveryMethod(t, d, 600, 0.6)
	// A stream's blocks must not split an example.
	bad := batchedRows{d, 7}
	if _, err := FitRows(context.Background(), "dpls", bad, 3, Options{Privacy: accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5}}); err == nil {
		t.Error("dpls accepted blocks that split an example")
	}
}

func TestGroupHelpers(t *testing.T) {
	sizes := []int32{3, 1, 2, 5}
	if b := splitParts(sizes, 11, 3); !slices.Equal(b, []int{0, 3, 11, 11}) {
		t.Errorf("splitParts: %v", b)
	}
	if b := splitParts(nil, 11, 3); !slices.Equal(b, []int{0, 3, 7, 11}) {
		t.Errorf("splitParts without grouping: %v", b)
	}
	w := newGroupWalk(sizes, nil, 11)
	if n, s, _ := w.next(2); n != 3 || !slices.Equal(s, []int32{3}) {
		t.Errorf("next: %d %v", n, s)
	}
	if _, _, err := w.take(2); err == nil {
		t.Error("take split an example")
	}
	for _, c := range []struct {
		groups, y []int32
		w         []float64
		ok        bool
	}{
		{[]int32{2, 1}, []int32{0, 0, 1}, nil, true},
		{[]int32{2, 1}, []int32{0, 1, 1}, nil, false},
		{[]int32{2, 2}, []int32{0, 0, 1}, nil, false},
		{[]int32{0, 3}, []int32{0, 0, 1}, nil, false},
		{[]int32{1}, []int32{0, 0, 1}, nil, false},
		{[]int32{2, 1}, []int32{0, 1, 1}, []float64{0.3, 0.7, 1}, true}, // a soft label
		{[]int32{2, 1}, []int32{0, 1, 1}, []float64{0, 0, 1}, false},    // an example of weight 0
		{[]int32{2, 1}, []int32{0, 1, 1}, []float64{0.3, 1.2, 1}, false},
		{[]int32{2, 1}, []int32{0, 1, 1}, []float64{0.3, 0.7}, false},
		{nil, []int32{0, 1}, []float64{1, 1}, false}, // weights without grouping
	} {
		if err := CheckGroups(c.groups, c.y, c.w); (err == nil) != c.ok {
			t.Errorf("CheckGroups(%v, %v, %v): %v", c.groups, c.y, c.w, err)
		}
	}
}

// BenchmarkClippedGradient: one clipped gradient pass (the gradient
// passes' float64 blocks) over 65,536 rows of dimension 257, 10 classes, as single rows
// and as examples of K views: the grouped clipping's k×k products against
// the per-row norms, on the same rows (the two GEMMs dominate either).
func BenchmarkClippedGradient(b *testing.B) {
	const n, d, m = 1 << 16, 256, 10
	base := blobs(n, d, m, 2)
	for _, k := range []int{1, 4, 16} {
		data := *base
		if k > 1 {
			data.Groups = make([]int32, n/k)
			for i := range data.Groups {
				data.Groups[i] = int32(k)
			}
			data.Y = make([]int32, n) // an example's views share its label
			for i := range data.Y {
				data.Y[i] = base.Y[i/k*k]
			}
		}
		u, theta, _ := gradientCase(&data)
		total := make([]float64, m*u.D)
		z := make([]float64, uBlockRows*m)
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			for range b.N {
				walk := newGroupWalk(u.Groups, nil, u.N)
				for start := 0; start < u.N; {
					rows, sizes, _ := walk.next(uBlockRows)
					gradientBlock(&Data{X: u.X[start*u.D : (start+rows)*u.D], Y: u.Y[start : start+rows], N: rows, D: u.D, M: m, Groups: sizes}, theta, 1, z[:rows*m], total)
					start += rows
				}
			}
			b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
