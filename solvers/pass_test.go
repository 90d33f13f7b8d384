package solvers

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/preprocessing"
)

// partsRemote is Options.Remote over parts of the data, as a runner
// computes it over a dataset's shards: each part's sums (its First set to
// its first example's index), added.
type partsRemote struct{ parts []*Data }

func (r partsRemote) rows(i int, t *preprocessing.Transform) Rows {
	rows := DataRows(r.parts[i])
	if t != nil {
		rows = TransformRows(rows, t)
	}
	return rows
}

func (r partsRemote) Accumulate(ctx context.Context, m int, opt StatsOptions, t *preprocessing.Transform) (*Stats, error) {
	var sum *Stats
	for i := range r.parts {
		st, err := Accumulate(ctx, r.rows(i, t), m, opt)
		if err != nil {
			return nil, err
		}
		if sum == nil {
			sum = st
		} else if err := sum.Add(st); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

func (r partsRemote) Pass(ctx context.Context, p Pass, t *preprocessing.Transform) ([]float64, error) {
	var sum []float64
	for i, part := range r.parts {
		v, err := RunPass(ctx, r.rows(i, t), p)
		if err != nil {
			return nil, err
		}
		if sum == nil {
			sum = v
		} else {
			floatsAdd(sum, v)
		}
		p.First += int64(part.Examples())
	}
	return sum, nil
}

// split cuts d into parts at the given rows.
func split(d *Data, at ...int) []*Data {
	var parts []*Data
	lo := 0
	for _, hi := range append(at, d.N) {
		parts = append(parts, d.rowRange(lo, hi))
		lo = hi
	}
	return parts
}

// TestPassesAddUp (#24): each pass over parts of the rows adds up to the
// pass over the whole — within 1e-9, the order of float64 additions (1e-6
// for the transform matrix and the Newton Hessians, pushed in float32
// rows) — what a distributed runner relies on.
func TestPassesAddUp(t *testing.T) {
	d := blobs(1500, 5, 3, 17)
	parts := split(d, 700, 1100)
	theta := make([]float64, 3*6)
	for i := range theta {
		theta[i] = float64(i%5) - 2
	}
	mean := []float64{0.1, -0.2, 0.05, 0, 0.3}
	for _, c := range []struct {
		p   Pass
		tol float64
	}{
		{Pass{Kind: PassCovariance, M: 3, Clip: 0.8, Normalize: true}, 1e-9},
		{Pass{Kind: PassGradient, M: 3, Clip: 0.8, Normalize: true, ClipGrad: 0.3, Theta: theta}, 1e-9},
		{Pass{Kind: PassGradient, M: 3, Clip: 1, Normalize: true, ClipGrad: 0.3, Theta: theta, Sample: accounting.NewPoissonSample(accounting.SeededNoise(4), 0.1)}, 1e-9},
		{Pass{Kind: PassNewton, M: 3, Clip: 0.8, Normalize: true, Theta: theta, Classes: []int{0, 2}, Gradient: true, Counts: true, ClassSums: true}, 1e-6},
		{Pass{Kind: PassTransformMean}, 1e-9},
		{Pass{Kind: PassTransformSquares, Mean: mean}, 1e-9},
		{Pass{Kind: PassTransformMatrix, Mean: mean}, 1e-6},
		{Pass{Kind: PassLPMean, Scale: 2}, 1e-9},
		{Pass{Kind: PassLogReg, M: 3, Normalize: true, Theta: theta}, 1e-9},
		{Pass{Kind: PassLPGradient, M: 3, Scale: 2, Mean: mean, Theta: theta[:3*5], ClipGrad: 0.3}, 1e-9},
	} {
		whole, err := RunPass(context.Background(), DataRows(d), c.p)
		if err != nil {
			t.Fatalf("%s: %v", c.p.Kind, err)
		}
		sum, err := partsRemote{parts}.Pass(context.Background(), c.p, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.p.Kind, err)
		}
		if len(sum) != len(whole) {
			t.Fatalf("%s: %d values by parts, %d whole", c.p.Kind, len(sum), len(whole))
		}
		for i := range whole {
			if math.Abs(sum[i]-whole[i]) > c.tol*math.Max(1, math.Abs(whole[i])) {
				t.Fatalf("%s[%d]: parts add to %v, whole %v", c.p.Kind, i, sum[i], whole[i])
			}
		}
	}
}

// TestRemoteFits (#24): every method that reads its data through passes
// (Method.Reads has OptRunner), fitted with its sums computed over three
// parts (Options.Remote), is the fit on the whole, within 1e-6 (a
// transform's parameters are rounded to float32, where a sum's last bits
// can round the other way) — with and
// without a transform learned first, and with Poisson-sampled DP-SGD,
// whose samples are drawn per example wherever the example is read.
func TestRemoteFits(t *testing.T) {
	d := blobs(1500, 5, 3, 17)
	remote := partsRemote{split(d, 700, 1100)}
	cases := []struct {
		method string
		params map[string]float64
		spec   TransformSpec
	}{
		{method: "dpfc"},
		{method: "dpsgd", params: map[string]float64{"steps": 15}},
		{method: "dpsgd", params: map[string]float64{"steps": 15, "batch": 200}},
		{method: "dpnewton", params: map[string]float64{"steps": 2}},
		{method: "newton", params: map[string]float64{"steps": 3}},
		{method: "dpls"},
		{method: "ls"},
		{method: "dpls", spec: TransformSpec{Kind: TransformPCA, Dims: 3}},
		{method: "dpfc", spec: TransformSpec{Kind: TransformStandardize}},
		{method: "dpsgd", params: map[string]float64{"steps": 5}, spec: TransformSpec{Kind: TransformCenter}},
		{method: "ls", spec: TransformSpec{Kind: TransformWhiten}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s%v/%s", c.method, c.params, c.spec.Kind), func(t *testing.T) {
			m, err := Lookup(c.method)
			if err != nil {
				t.Fatal(err)
			}
			opts := func() Options {
				o := Options{Privacy: accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(3)}, Params: c.params, Transform: c.spec}
				if !m.Private {
					o.Privacy.Epsilon = math.Inf(1)
				}
				return o
			}
			want, err := Fit(context.Background(), c.method, d, opts())
			if err != nil {
				t.Fatal(err)
			}
			o := opts()
			o.Remote = remote
			got, err := Fit(context.Background(), c.method, d, o)
			if err != nil {
				t.Fatal(err)
			}
			if got.Guarantee.String() != want.Guarantee.String() {
				t.Fatalf("guarantee %q by parts, %q whole", got.Guarantee, want.Guarantee)
			}
			for i := range want.W {
				if math.Abs(got.W[i]-want.W[i]) > 1e-6*math.Max(1, math.Abs(want.W[i])) {
					t.Fatalf("weight %d: %v by parts, %v whole", i, got.W[i], want.W[i])
				}
			}
		})
	}
}

// TestSampledGradientPass: a gradient pass over a Poisson sample is the
// pass over the sampled examples alone — their rows gathered by hand, the
// membership asked of the sample itself — at rates where whole blocks and
// whole parts are left empty, and over parts.
func TestSampledGradientPass(t *testing.T) {
	d := blobs(5000, 5, 3, 21)
	theta := make([]float64, 3*6)
	for i := range theta {
		theta[i] = float64(i%7)/3 - 1
	}
	for _, q := range []float64{0.0005, 0.05, 0.6} {
		s := accounting.NewPoissonSample(accounting.SeededNoise(8), q)
		member, err := s.Member()
		if err != nil {
			t.Fatal(err)
		}
		kept := &Data{D: d.D, M: d.M}
		for i := 0; i < d.N; i++ {
			if member(int64(i)) {
				kept.X, kept.Y = append(kept.X, d.Row(i)...), append(kept.Y, d.Y[i])
				kept.N++
			}
		}
		p := Pass{Kind: PassGradient, M: 3, Clip: 1, Normalize: true, ClipGrad: 0.5, Theta: theta}
		want, err := RunPass(context.Background(), DataRows(kept), p)
		if err != nil {
			t.Fatal(err)
		}
		p.Sample = s
		whole, err := RunPass(context.Background(), DataRows(d), p)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := partsRemote{split(d, 1, 2100, 4400)}.Pass(context.Background(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			for _, got := range []float64{whole[i], parts[i]} {
				if math.Abs(got-want[i]) > 1e-9*math.Max(1, math.Abs(want[i])) {
					t.Fatalf("q %v (%d sampled), value %d: %v, want %v", q, kept.N, i, got, want[i])
				}
			}
		}
	}
}

// TestLPInPassesIsTheInMemoryFit (#42): DP-LP streamed in passes — a
// file's path, and a runner's (its passes summed by part) — fits the
// in-memory classifier within 1e-6, one row per example and with views
// (each example's mean gradient clipped): the rows stream in float32, as
// a file holds them, where these in-memory rows are float64.
func TestLPInPassesIsTheInMemoryFit(t *testing.T) {
	d := blobs(1200, 5, 3, 23)
	views := withViews(d, func(i int) int { return 1 + i%3 }, 9)
	// (The views' file streams in one block and is one part: Rows.Each
	// hands out whole examples, which batchedRows and split do not.)
	for _, c := range []struct {
		name  string
		d     *Data
		batch int
		parts []*Data
	}{{"one row per example", d, 500, split(d, 400, 900)}, {"views", views, views.N, []*Data{views}}} {
		opts := func() Options {
			return Options{Privacy: accounting.ReleaseOptions{Epsilon: 2, Delta: 1e-5, Noise: accounting.SeededNoise(3)},
				Params: map[string]float64{"steps": 6, "norm": 1.5}}
		}
		want, err := Fit(context.Background(), "dplp", c.d, opts())
		if err != nil {
			t.Fatal(err)
		}
		streamed, err := FitRows(context.Background(), "dplp", batchedRows{c.d, c.batch}, 3, opts())
		if err != nil {
			t.Fatal(err)
		}
		o := opts()
		o.Remote = partsRemote{c.parts}
		remote, err := FitRows(context.Background(), "dplp", batchedRows{c.d, c.batch}, 3, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []*Result{streamed, remote} {
			for i := range want.W {
				if math.Abs(got.W[i]-want.W[i]) > 1e-6*math.Max(1, math.Abs(want.W[i])) {
					t.Fatalf("%s: weight %d = %v in passes, %v in memory", c.name, i, got.W[i], want.W[i])
				}
			}
			for i := range want.Prep.Center {
				if math.Abs(got.Prep.Center[i]-want.Prep.Center[i]) > 1e-6 {
					t.Fatalf("%s: centre %d = %v in passes, %v in memory", c.name, i, got.Prep.Center[i], want.Prep.Center[i])
				}
			}
		}
	}
}

// TestLogRegInPassesIsTheInMemoryFit (#42): logreg with each objective a
// pass (a runner's path, its passes summed by part) fits the in-memory
// classifier within 1e-5 — L-BFGS stops on a gradient threshold, so
// rounding moves where it stops — and so does a stream read here.
func TestLogRegInPassesIsTheInMemoryFit(t *testing.T) {
	d := blobs(1200, 5, 3, 29)
	o := func() Options { return Options{Privacy: accounting.ReleaseOptions{Epsilon: math.Inf(1)}} }
	want, err := Fit(context.Background(), "logreg", d, o())
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := FitRows(context.Background(), "logreg", batchedRows{d, 500}, 3, o())
	if err != nil {
		t.Fatal(err)
	}
	r := o()
	r.Remote = partsRemote{split(d, 400, 900)}
	remote, err := FitRows(context.Background(), "logreg", batchedRows{d, 500}, 3, r)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]*Result{"streamed": streamed, "in passes": remote} {
		for i := range want.W {
			if math.Abs(got.W[i]-want.W[i]) > 1e-5*math.Max(1, math.Abs(want.W[i])) {
				t.Fatalf("%s: weight %d = %v, %v in memory", name, i, got.W[i], want.W[i])
			}
		}
		for i := range want.B {
			if math.Abs(got.B[i]-want.B[i]) > 1e-5*math.Max(1, math.Abs(want.B[i])) {
				t.Fatalf("%s: bias %d = %v, %v in memory", name, i, got.B[i], want.B[i])
			}
		}
	}
}
