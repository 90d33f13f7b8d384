package prototypes

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/internal/protodist"
	"github.com/dpfeat/dpfeat/solvers"
)

// TestClusterSpanCutsPrototypeNoise: with few rows in many dimensions,
// DPPL-Mean's noisy class sums on a public whitening classify better
// within the span of the public rows' clusters
// (solvers.TransformSpec.Clusters), whose directions hold the classes
// and a fraction of the noise. Seeded; the means over 5 seeds were
// 0.482 in all 192 whitened dimensions and 1.000 in the span of 8.
func TestClusterSpanCutsPrototypeNoise(t *testing.T) {
	const D, M = 192, 4
	acc := func(clusters int) float64 {
		var sum float64
		for seed := uint64(1); seed <= 5; seed++ {
			tr, te, pub := spanSplit(blobs(6000, D, M, seed))
			o := solvers.Options{
				Privacy:   accounting.ReleaseOptions{Epsilon: 0.1, Delta: 1e-5, Noise: accounting.SeededNoise(seed)},
				Transform: solvers.TransformSpec{Kind: solvers.TransformWhiten, Ridge: solvers.RidgeSample, Public: unlabeled(pub), PublicName: "pub.arrow", Clusters: clusters},
			}
			res, err := solvers.Fit(context.Background(), "dpplmean", tr, o)
			if err != nil {
				t.Fatal(err)
			}
			sum += accuracyOf(t, res, te)
		}
		return sum / 5
	}
	all, span := acc(0), acc(2*M)
	t.Logf("dpplmean at ε = 0.1, n = 600, D = %d: whitened %.3f, in the clusters' span %.3f", D, all, span)
	if span < all+0.2 {
		t.Errorf("the cluster span gained %.3f (%.3f against %.3f), want ≥ 0.2", span-all, span, all)
	}
}

// spanSplit splits all, row by row, into 10% training rows, 20% test
// rows and 70% public rows (labelled: unlabeled gives the source).
func spanSplit(all *solvers.Data) (tr, te, pub *solvers.Data) {
	tr, te, pub = &solvers.Data{D: all.D, M: all.M}, &solvers.Data{D: all.D, M: all.M}, &solvers.Data{D: all.D, M: all.M}
	for i := 0; i < all.N; i++ {
		p := pub
		switch i % 20 {
		case 0, 1:
			p = tr
		case 2, 3, 4, 5:
			p = te
		}
		p.X, p.Y = append(p.X, all.Row(i)...), append(p.Y, all.Y[i])
		p.N++
	}
	return tr, te, pub
}

// TestDistillHeadOfPrototypes: DPPL-Mean within the public rows'
// cluster span, distilled (solvers.TransformSpec.Distill): the head is
// linear over all D whitened directions, labels the public rows as the
// prototypes do, and classifies the test rows about as well, at the
// prototypes' ε.
func TestDistillHeadOfPrototypes(t *testing.T) {
	const D, M = 64, 4
	tr, te, pub := spanSplit(blobs(6000, D, M, 3))
	fit := func(distill bool) *solvers.Result {
		o := solvers.Options{
			Privacy:   accounting.ReleaseOptions{Epsilon: 0.5, Delta: 1e-5, Noise: accounting.SeededNoise(3)},
			Transform: solvers.TransformSpec{Kind: solvers.TransformWhiten, Ridge: solvers.RidgeSample, Public: unlabeled(pub), PublicName: "pub.arrow", Clusters: 2 * M, Distill: distill},
		}
		res, err := solvers.Fit(context.Background(), "dpplmean", tr, o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	protos, head := fit(false), fit(true)
	if head.Prototypes != nil || len(head.W) != M*D || head.Prep.Transform.Dims != D {
		t.Fatalf("head: %d prototype values, %d weights over %d directions; want none, %d over %d", len(head.Prototypes), len(head.W), head.Prep.Transform.Dims, M*D, D)
	}
	if head.Guarantee.Epsilon != protos.Guarantee.Epsilon {
		t.Errorf("ε distilled %v, prototypes %v", head.Guarantee.Epsilon, protos.Guarantee.Epsilon)
	}
	linear := func(d *solvers.Data, i int) int {
		x := head.Prep.Apply(append([]float64(nil), d.Row(i)...))
		best, arg := math.Inf(-1), 0
		for c := range M {
			if s := head.B[c] + floats.Dot(head.W[c*D:(c+1)*D], x); s > best {
				best, arg = s, c
			}
		}
		return arg
	}
	agree := 0
	for i := range pub.N {
		if linear(pub, i) == nearestOf(protos, pub.Row(i), M) {
			agree++
		}
	}
	if float64(agree) < 0.95*float64(pub.N) {
		t.Errorf("the head agrees with the prototypes on %d of %d public rows, want ≥ 95%%", agree, pub.N)
	}
	right := 0
	for i := range te.N {
		if linear(te, i) == int(te.Y[i]) {
			right++
		}
	}
	if a, b := accuracyOf(t, protos, te), float64(right)/float64(te.N); b < a-0.02 {
		t.Errorf("test accuracy: head %.3f, prototypes %.3f", b, a)
	}
}

// accuracyOf is the share of d's rows whose nearest prototype (cosine,
// protodist.Distance as models scores) is their class's.
func accuracyOf(t *testing.T, res *solvers.Result, d *solvers.Data) float64 {
	t.Helper()
	ok := 0
	for i := 0; i < d.N; i++ {
		if nearestOf(res, d.Row(i), d.M) == int(d.Y[i]) {
			ok++
		}
	}
	return float64(ok) / float64(d.N)
}

// nearestOf is the class of res's nearest prototype (cosine,
// protodist.Distance as models scores) to row, through res's
// preprocessing.
func nearestOf(res *solvers.Result, row []float64, M int) int {
	x := res.Prep.Apply(append([]float64(nil), row...))
	D := len(x)
	best, arg := math.Inf(1), -1
	for c := 0; c < M; c++ {
		if dist := protodist.Distance(x, floats.Norm(x, 2), res.Prototypes[c*D:(c+1)*D], true); dist < best {
			best, arg = dist, c
		}
	}
	return arg
}
