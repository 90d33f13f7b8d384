package preprocessing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestApplyOrderAndClip: normalise, pool, scale, centre, clip, in that
// order; the clip lands at C·ClipMargin, never above C.
func TestApplyOrderAndClip(t *testing.T) {
	p := Preprocessing{Normalize: true, Pool: 2, Scale: 10, Center: []float64{1, 0}, Clip: 2}
	x := p.Apply([]float64{3, 4, 0, 0}) // unit: .6 .8 0 0 → pooled .7 0 → ×10 7 0 → −c 6 0 → clip 2
	if len(x) != 2 || math.Abs(x[0]-2*ClipMargin) > 1e-15 || x[1] != 0 || Norm(x) > 2 {
		t.Errorf("%v", x)
	}
}

// ExamplePreprocessing_Apply shows DP-LP's preprocessing: unit norm, then
// norm C = 4, then its private mean subtracted.
func ExamplePreprocessing_Apply() {
	p := Preprocessing{Normalize: true, Scale: 4, Center: []float64{0.5, 0.5}}
	fmt.Println(p.Apply([]float64{3, 4}))
	// Output: [1.9 2.7]
}

// TestApplyRowsIsApply: a block of rows through ApplyRows is, bit for
// bit, each row through Apply — with a projecting transform (whitening,
// fewer directions), a centring-only one, pooling, scale, centre and clip —
// so that a method trained on blocks and a classifier scoring one row
// apply the same map. The transform's ApplyRowsFast (public rows) gives
// Apply's values to rounding (1e-12 of the row's size).
func TestApplyRowsIsApply(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	const n, d = 70, 24
	vec := func(k int) []float64 { return normals(r, k) }
	project := &Transform{Kind: "whiten", In: d, Dims: 10, Mean: vec(d), Projection: vec(10 * d)}
	centre := &Transform{Kind: "center", In: d, Dims: d, Mean: vec(d)}
	for _, p := range []Preprocessing{
		{Transform: project, Normalize: true},
		{Transform: project, Normalize: true, Pool: 3, Scale: 2, Center: vec(4), Clip: 0.5},
		{Transform: centre, Normalize: true},
		{Transform: centre, Normalize: true, Pool: 5},
		{Normalize: true, Clip: 0.3},
	} {
		x := vec(n * d)
		k := p.PooledDim(d)
		got := make([]float64, n*k)
		p.ApplyRows(slices.Clone(x), n, d, got)
		var fast []float64 // the transform's rows as one matrix product: Apply's to rounding
		if p.Transform != nil {
			fast = make([]float64, n*p.Transform.OutDim(d))
			p.Transform.ApplyRowsFast(slices.Clone(x), n, d, fast)
		}
		for i := 0; i < n; i++ {
			want := p.Apply(slices.Clone(x[i*d : (i+1)*d]))
			if !slices.Equal(got[i*k:(i+1)*k], want) {
				t.Fatalf("%+v: row %d: ApplyRows %v, Apply %v", p, i, got[i*k:(i+1)*k], want)
			}
			if fast == nil {
				continue
			}
			o := p.Transform.OutDim(d)
			tr := p.Transform.Apply(slices.Clone(x[i*d : (i+1)*d]))
			for j, w := range tr {
				if math.Abs(fast[i*o+j]-w) > 1e-12*Norm(tr) {
					t.Fatalf("%s: row %d, value %d: ApplyRowsFast %v, Apply %v", p.Transform.Kind, i, j, fast[i*o+j], w)
				}
			}
		}
	}
}

// BenchmarkTransformRows applies a whitening of D = 768 and 2048 (a
// ViT-B's and a ResNet-50's features) to 256 rows: row by row through
// Apply, as training and prediction did, and in blocks through
// ApplyRows (the same bits). The rate counts the projection's 2·D²
// flops per row; row by row a 2048×2048 projection (32 MB) is read from
// memory once per row. loop is Apply's projection before (a plain loop
// per output, one accumulator), the peer; ApplyRowsFast, one matrix
// product (public rows: not Apply's bits), its BLAS bound.
func BenchmarkTransformRows(b *testing.B) {
	for _, d := range []int{768, 2048} {
		r := rand.New(rand.NewPCG(1, uint64(d)))
		vec := func(n int) []float64 { return normals(r, n) }
		const n = 256
		tr := &Transform{Kind: "whiten", In: d, Dims: d, Mean: vec(d), Projection: vec(d * d)}
		x := vec(n * d)
		buf, out := make([]float64, n*d), make([]float64, n*d)
		rate := func(b *testing.B) {
			b.ReportMetric(2*float64(d)*float64(d)*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		b.Run(fmt.Sprintf("loop/D=%d", d), func(b *testing.B) { // Apply's projection before 2026-11-27
			p := make([]float64, d)
			for b.Loop() {
				copy(buf, x)
				for i := 0; i < n; i++ {
					row := buf[i*d : (i+1)*d]
					tr.prepare(row)
					for k := range p {
						var s float64
						for j, v := range tr.Projection[k*d : (k+1)*d] {
							s += v * row[j]
						}
						p[k] = s
					}
				}
			}
			rate(b)
		})
		b.Run(fmt.Sprintf("Apply/D=%d", d), func(b *testing.B) {
			for b.Loop() {
				copy(buf, x)
				for i := 0; i < n; i++ {
					tr.Apply(buf[i*d : (i+1)*d])
				}
			}
			rate(b)
		})
		b.Run(fmt.Sprintf("ApplyRows/D=%d", d), func(b *testing.B) {
			for b.Loop() {
				copy(buf, x)
				tr.ApplyRows(buf, n, d, out)
			}
			rate(b)
		})
		b.Run(fmt.Sprintf("ApplyRowsFast/D=%d", d), func(b *testing.B) { // public rows (one matrix product)
			for b.Loop() {
				copy(buf, x)
				tr.ApplyRowsFast(buf, n, d, out)
			}
			rate(b)
		})
	}
}

// normals is k standard normal draws from r.
func normals(r *rand.Rand, k int) []float64 {
	v := make([]float64, k)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}
