package solvers

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/preprocessing"
)

// TestClusterSpanKeepsTheClusters: public rows around four orthogonal
// centres in 32 dimensions (with noise in all 32); the span of four
// clusters holds each centre almost whole and the rows' noise only in
// those four directions.
func TestClusterSpanKeepsTheClusters(t *testing.T) {
	const D, K, n = 32, 4, 2000
	r := rand.New(rand.NewPCG(3, 4))
	pub := &Data{D: D, N: n, X: make([]float64, n*D), Y: make([]int32, n)}
	for i := 0; i < n; i++ {
		row := pub.Row(i)
		for k := range row {
			row[k] = 0.15 * r.NormFloat64()
		}
		row[3+7*(i%K)] += 1 // centre i%K: unit vector e_{3+7j}
	}
	tr := &preprocessing.Transform{Kind: TransformWhiten, Source: "public", In: D, Dims: D, Mean: make([]float64, D), Projection: identity(D)}
	if err := clusterSpan(context.Background(), pub, tr, K, &Options{}); err != nil {
		t.Fatal(err)
	}
	if tr.Dims != K || len(tr.Projection) != K*D {
		t.Fatalf("span of %d directions (%d values), want %d", tr.Dims, len(tr.Projection), K)
	}
	for j := 0; j < K; j++ {
		c := make([]float64, D)
		c[3+7*j] = 1
		var kept float64
		for d := 0; d < K; d++ {
			p := floats.Dot(tr.Projection[d*D:(d+1)*D], c)
			kept += p * p
		}
		if kept < 0.98 {
			t.Errorf("centre %d: the span keeps %.3f of its energy, want ≥ 0.98", j, kept)
		}
	}
	// Orthonormal rows (to float32 rounding, as a classifier file stores them).
	for a := 0; a < K; a++ {
		for b := 0; b < K; b++ {
			want := 0.0
			if a == b {
				want = 1
			}
			if got := floats.Dot(tr.Projection[a*D:(a+1)*D], tr.Projection[b*D:(b+1)*D]); math.Abs(got-want) > 1e-6 {
				t.Errorf("rows %d·%d = %v, want %v", a, b, got, want)
			}
		}
	}
}

func identity(d int) []float64 {
	p := make([]float64, d*d)
	for i := 0; i < d; i++ {
		p[i*d+i] = 1
	}
	return p
}

// TestOrthonormalRows: the basis of a span drops dependent rows.
func TestOrthonormalRows(t *testing.T) {
	for _, c := range []struct {
		name string
		a    []float64
		k    int
		want int
	}{
		{"independent", []float64{1, 0, 0, 1, 1, 0, 1, 1, 1}, 3, 3},
		{"a repeated row", []float64{1, 2, 3, 1, 2, 3, 0, 1, 0}, 3, 2},
		{"a sum of two", []float64{1, 0, 0, 0, 1, 0, 1, 1, 0}, 3, 2},
		{"a zero row", []float64{0, 0, 0, 0, 1, 0, 0, 0, 0}, 3, 1},
	} {
		q := orthonormalRows(c.a, c.k, 3)
		if got := len(q) / 3; got != c.want {
			t.Errorf("%s: %d rows, want %d", c.name, got, c.want)
		}
	}
}

// TestClusterSpanReadsPublicRowsOnly: with a public whitening and its
// cluster span, training sets that differ in one row (replaced: the
// sample ridge reads n, public or released as n̂) get the same
// projection, bit for bit, and the fit's guarantee is that of the
// same fit without the span: nothing more is released or charged.
func TestClusterSpanReadsPublicRowsOnly(t *testing.T) {
	d, pub := trainAndPublic(shiftedBy(1200, 16, 4, 5, 0.3))
	neighbour := &Data{D: d.D, M: d.M, N: d.N, X: slices.Clone(d.X), Y: slices.Clone(d.Y)}
	for k := range d.D {
		neighbour.X[k] = -d.X[k]
	}
	neighbour.Y[0] = (d.Y[0] + 1) % int32(d.M)
	fit := func(d *Data, k int) *Result {
		o := Options{
			Privacy:   accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(1)},
			Transform: TransformSpec{Kind: TransformWhiten, Ridge: RidgeSample, Public: pub, PublicName: "pub.arrow", Clusters: k},
		}
		res, err := Fit(context.Background(), "dpsgd", d, o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b, plain := fit(d, 6), fit(neighbour, 6), fit(d, 0)
	if !slices.Equal(a.Prep.Transform.Projection, b.Prep.Transform.Projection) || !slices.Equal(a.Prep.Transform.Mean, b.Prep.Transform.Mean) {
		t.Error("the cluster span moved when a training row was replaced")
	}
	if a.Prep.Transform.Dims != 6 || a.Hyperparameters["transform_clusters"] != 6 || a.Hyperparameters["transform_dims"] != 6 {
		t.Errorf("span of %d directions, hyperparameters %v", a.Prep.Transform.Dims, a.Hyperparameters)
	}
	if a.Guarantee.Epsilon != plain.Guarantee.Epsilon || len(a.Guarantee.Mechanisms) != len(plain.Guarantee.Mechanisms) {
		t.Errorf("guarantee with the span ε = %v (%d mechanisms), without %v (%d)", a.Guarantee.Epsilon, len(a.Guarantee.Mechanisms), plain.Guarantee.Epsilon, len(plain.Guarantee.Mechanisms))
	}
	// Deterministic: the same public rows give the same span.
	if c := fit(d, 6); !slices.Equal(a.Prep.Transform.Projection, c.Prep.Transform.Projection) {
		t.Error("two fits on the same public rows learned different spans")
	}
}

// TestClusterSpanWholeWhitening: a span of as many clusters as the
// whitening has directions, or more than the public rows, is no span:
// the whitening keeps every direction and no transform_clusters is
// recorded; with too few rows the fit says so.
func TestClusterSpanWholeWhitening(t *testing.T) {
	d := shifted(300, 8, 3, 1)
	for _, c := range []struct {
		name     string
		pub      *Data
		clusters int
		note     bool
	}{
		{"as many clusters as directions", shifted(200, 8, 3, 9), 8, false},
		{"more clusters than public rows", shifted(6, 8, 3, 9), 7, true},
	} {
		for i := range c.pub.Y {
			c.pub.Y[i] = -1
		}
		var notes []string
		o := Options{
			Privacy:   accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(1)},
			Transform: TransformSpec{Kind: TransformWhiten, Public: c.pub, PublicName: "pub.arrow", Clusters: c.clusters},
			Note:      func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) },
		}
		res, err := Fit(context.Background(), "dpsgd", d, o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, recorded := res.Hyperparameters["transform_clusters"]
		if res.Prep.Transform.Dims != 8 || recorded {
			t.Errorf("%s: %d directions, transform_clusters recorded %v; want all 8, none", c.name, res.Prep.Transform.Dims, recorded)
		}
		said := strings.Contains(strings.Join(notes, "\n"), "fewer than the 7 clusters")
		if said != c.note {
			t.Errorf("%s: notes %q", c.name, notes)
		}
	}
}

// TestStrideSource: every stride-th row, across the source's blocks
// (PublicBlock rows each), in order, and the count it says.
func TestStrideSource(t *testing.T) {
	const N, D = 5000, 2
	src := &Data{N: N, D: D, X: make([]float64, N*D), Y: make([]int32, N)}
	for i := range N {
		src.X[i*D], src.X[i*D+1] = float64(i), -float64(i)
	}
	for _, stride := range []int{1, 3, 2048, 4999} {
		s := strideSource{src, stride}
		var got []float64
		if err := s.Each(func(block []float64, rows int) error {
			got = append(got, block[:rows*D]...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(got)/D != s.Rows() {
			t.Errorf("stride %d: %d rows handed out, Rows says %d", stride, len(got)/D, s.Rows())
		}
		for j := 0; j < len(got)/D; j++ {
			if want := float64(j * stride); got[j*D] != want || got[j*D+1] != -want {
				t.Fatalf("stride %d: row %d is %v, want row %v", stride, j, got[j*D:(j+1)*D], want)
			}
		}
	}
}

// TestCapRows: the public rows a pass reads stay within publicValuesMax
// values and are all of them below it (the 30,000 public rows of the
// bench's ResNet features at D = 256 read whole; at D = 2048, every
// second row).
func TestCapRows(t *testing.T) {
	for _, c := range []struct{ rows, width, stride int }{
		{30000, 256, 1},
		{30000, 1024, 1},
		{30000, 2048, 2},
		{1 << 20, 64, 2},
		{1<<20 + 1, 64, 3},
	} {
		src := &Data{N: c.rows, D: 1} // Rows() only: nothing is read
		got := capRows(src, c.width)
		stride := 1
		if s, ok := got.(strideSource); ok {
			stride = s.stride
		}
		if stride != c.stride {
			t.Errorf("%d rows × %d: stride %d, want %d", c.rows, c.width, stride, c.stride)
		}
		if got.Rows()*c.width > publicValuesMax {
			t.Errorf("%d rows × %d: %d rows read, over %d values", c.rows, c.width, got.Rows(), publicValuesMax)
		}
	}
}
