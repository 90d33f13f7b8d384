package solvers

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// softView is one view of an example as DP-Mix_Diff defines it: features
// and a target distribution over the classes (one-hot, or the soft label
// λ·e_y + (1 − λ)·e_y′ of a mixup with a public image).
type softView struct {
	x []float64
	t []float64
}

// withSoftLabels returns d with each row as an example of 1 + i%3 noisy
// views and i%2 mixups with a soft label (the other class (y+1) mod M,
// λ uniform), expanded as the solvers take them (two weighted rows per
// soft label), and the same examples as naive soft views.
func withSoftLabels(d *Data, seed uint64) (*Data, [][]softView) {
	r := rand.New(rand.NewPCG(seed, 11))
	out := &Data{D: d.D, M: d.M}
	var naive [][]softView
	noisy := func(i int) []float64 {
		row := append([]float64(nil), d.Row(i)...)
		for j := range row {
			row[j] += 0.3 * r.NormFloat64()
		}
		Preprocessing{Normalize: true}.Apply(row)
		return row
	}
	for i := 0; i < d.N; i++ {
		y := d.Y[i]
		var ex []softView
		rows := 0
		for range 1 + i%3 {
			x := noisy(i)
			t := make([]float64, d.M)
			t[y] = 1
			ex = append(ex, softView{x, t})
			out.X, out.Y, out.W = append(out.X, x...), append(out.Y, y), append(out.W, 1)
			rows++
		}
		for range i % 2 {
			x := noisy(i)
			lambda := r.Float64()
			other := (y + 1) % int32(d.M)
			t := make([]float64, d.M)
			t[y], t[other] = lambda, 1-lambda
			ex = append(ex, softView{x, t})
			out.X = append(append(out.X, x...), x...)
			out.Y, out.W = append(out.Y, y, other), append(out.W, lambda, 1-lambda)
			rows += 2
		}
		out.Groups = append(out.Groups, int32(rows))
		naive = append(naive, ex)
	}
	out.N = len(out.Y)
	return out, naive
}

// TestSoftLabelsMatchNaive (#22, DP-Mix_Diff): a soft label as two
// weighted rows gives, per example, the clipped mean over its views of
// the soft-target gradient (σ(θu) − t) ⊗ u — whole (DP-LP) and in blocks
// (the gradient passes of DP-FC and DP-SGD), clipped and not — and the sufficient
// statistics Σ_e mean_v x xᵀ and Σ_e mean_v t ⊗ x, counting each example
// once in its own class.
func TestSoftLabelsMatchNaive(t *testing.T) {
	d, naive := withSoftLabels(blobs(500, 4, 3, 31), 1)
	u, theta, z := gradientCase(d)
	for _, clip := range []float64{0, 0.05, 0.5, 100} {
		got := clippedGradientSum(u, z, clip)
		want := make([]float64, len(theta))
		for _, ex := range naive {
			ge := make([]float64, len(theta))
			for _, v := range ex {
				x := BiasFeatures(v.x, 1, false)
				for j := 0; j < u.M; j++ {
					var s float64
					for k, xv := range x {
						s += theta[j*u.D+k] * xv
					}
					res := Sigmoid(s) - v.t[j]
					for k, xv := range x {
						ge[j*u.D+k] += res * xv / float64(len(ex))
					}
				}
			}
			f := 1.0
			if clip > 0 {
				f = math.Min(1, clip*clipMargin/l2(ge))
			}
			for j := range want {
				want[j] += f * ge[j]
			}
		}
		checkGradients(t, u, theta, clip, got, want)
	}

	opt := StatsOptions{Gram: true, ClassGram: []int{0, 1, 2}, Clip: 0.5, Normalize: true}
	st, err := Accumulate(context.Background(), dataRows{d}, 3, opt)
	if err != nil {
		t.Fatal(err)
	}
	D := d.D
	G, sums, counts := make([]float64, D*D), make([]float64, 3*D), make([]int64, 3)
	for _, ex := range naive {
		y := slices.Index(ex[0].t, 1)
		counts[y]++
		for _, v := range ex {
			x := Preprocessing{Normalize: true, Clip: 0.5}.Apply(append([]float64(nil), v.x...))
			w := 1 / float64(len(ex))
			for a := range x {
				for c := range 3 {
					sums[c*D+a] += w * v.t[c] * x[a]
				}
				for b := range x {
					G[a*D+b] += w * x[a] * x[b]
				}
			}
		}
	}
	for i := range G {
		if math.Abs(st.Gram[i]-G[i]) > 1e-5*math.Max(1, math.Abs(G[i])) {
			t.Fatalf("G[%d] = %v, naive %v", i, st.Gram[i], G[i])
		}
	}
	for i := range sums {
		if math.Abs(st.Sums[i]-sums[i]) > 1e-4 {
			t.Fatalf("sum %d = %v, naive %v", i, st.Sums[i], sums[i])
		}
	}
	if !slices.Equal(st.Counts, counts) {
		t.Errorf("counts %v, want %v (an example in its own class)", st.Counts, counts)
	}
}

// TestASoftLabelledExampleMovesStatisticsByItsSensitivity: one example
// whose views include soft labels — every row at the clipping norm — moves
// the Gram and the class sums by at most C² and C.
func TestASoftLabelledExampleMovesStatisticsByItsSensitivity(t *testing.T) {
	const D = 5
	base, _ := withSoftLabels(blobs(300, D, 3, 12), 3)
	opt := StatsOptions{Gram: true, ClassGram: []int{0, 1, 2}, Normalize: true, Clip: 1}
	st, err := Accumulate(context.Background(), dataRows{base}, 3, opt)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(6, 6))
	for _, c := range []struct{ views, soft int }{{0, 1}, {1, 1}, {1, 4}, {3, 8}} {
		nb := &Data{X: slices.Clone(base.X), Y: slices.Clone(base.Y), W: slices.Clone(base.W), D: D, M: 3, Groups: slices.Clone(base.Groups)}
		row := func() []float64 {
			x := make([]float64, D)
			for j := range x {
				x[j] = r.NormFloat64()
			}
			return x
		}
		for range c.views {
			nb.X, nb.Y, nb.W = append(nb.X, row()...), append(nb.Y, 0), append(nb.W, 1)
		}
		for s := range c.soft {
			x := row()
			lambda := []float64{0.5, 0.01, 0.99, 0.3}[s%4]
			nb.X = append(append(nb.X, x...), x...)
			nb.Y, nb.W = append(nb.Y, 0, int32(1+s%2)), append(nb.W, lambda, 1-lambda)
		}
		nb.Groups = append(nb.Groups, int32(c.views+2*c.soft))
		nb.N = len(nb.Y)
		if dg, ds, dc := statsShift(t, st, nb, opt); dg > 1+1e-9 || ds > 1+1e-9 || dc != 1 {
			t.Errorf("%d views, %d soft: ‖ΔG‖ = %v, ‖Δsums‖ = %v, count +%d", c.views, c.soft, dg, ds, dc)
		}
	}
}

// TestSoftLabelsFitEveryMethod: every method of this package fits
// soft-labelled rows after Prepare's class sort, which keeps each
// example's rows and weights together (the exponential mechanisms of
// package prototypes refuse them: cli's TestSoftLabelledTrainingFiles).
func TestSoftLabelsFitEveryMethod(t *testing.T) {
	d, _ := withSoftLabels(blobs(600, 5, 3, 9), 4)
	x := make([]float32, len(d.X))
	for i, v := range d.X {
		x[i] = float32(v)
	}
	p, err := Prepare(x, d.Y, d.Groups, d.W, d.D, d.M, true)
	if err != nil {
		t.Fatal(err)
	}
	// Prepare: examples by class, each with its rows and weights.
	at, last := 0, int32(-1)
	for _, k := range p.Groups {
		if p.Y[at] < last || p.W[at] == 0 {
			t.Fatalf("Prepare: example at row %d of class %d after class %d", at, p.Y[at], last)
		}
		last = p.Y[at]
		var w float64
		for _, v := range p.W[at : at+int(k)] {
			w += v
		}
		if math.Abs(w-math.Round(w)) > 1e-12 {
			t.Fatalf("Prepare: the example at row %d has weights summing to %v, not a whole number of views", at, w)
		}
		at += int(k)
	}
	fitEveryMethod(t, p, 600, 0.5)
}
