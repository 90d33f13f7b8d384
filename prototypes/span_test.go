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
			all := blobs(6000, D, M, seed) // 600 training rows, 1,200 test, 4,200 public
			var tr, te, pub solvers.Data
			for _, p := range []*solvers.Data{&tr, &te, &pub} {
				p.D, p.M = D, M
			}
			for i := 0; i < all.N; i++ {
				p := &pub
				switch i % 20 {
				case 0, 1:
					p = &tr
				case 2, 3, 4, 5:
					p = &te
				}
				p.X, p.Y = append(p.X, all.Row(i)...), append(p.Y, all.Y[i])
				p.N++
			}
			o := solvers.Options{
				Privacy:   accounting.ReleaseOptions{Epsilon: 0.1, Delta: 1e-5, Noise: accounting.SeededNoise(seed)},
				Transform: solvers.TransformSpec{Kind: solvers.TransformWhiten, Ridge: solvers.RidgeSample, Public: unlabeled(&pub), PublicName: "pub.arrow", Clusters: clusters},
			}
			res, err := solvers.Fit(context.Background(), "dpplmean", &tr, o)
			if err != nil {
				t.Fatal(err)
			}
			sum += accuracyOf(t, res, &te)
		}
		return sum / 5
	}
	all, span := acc(0), acc(2*M)
	t.Logf("dpplmean at ε = 0.1, n = 600, D = %d: whitened %.3f, in the clusters' span %.3f", D, all, span)
	if span < all+0.2 {
		t.Errorf("the cluster span gained %.3f (%.3f against %.3f), want ≥ 0.2", span-all, span, all)
	}
}

// accuracyOf is the share of d's rows whose nearest prototype (cosine,
// protodist.Distance as models scores) is their class's.
func accuracyOf(t *testing.T, res *solvers.Result, d *solvers.Data) float64 {
	t.Helper()
	ok := 0
	for i := 0; i < d.N; i++ {
		x := res.Prep.Apply(append([]float64(nil), d.Row(i)...))
		D := len(x)
		best, arg := math.Inf(1), -1
		for c := 0; c < d.M; c++ {
			if dist := protodist.Distance(x, floats.Norm(x, 2), res.Prototypes[c*D:(c+1)*D], true); dist < best {
				best, arg = dist, c
			}
		}
		if arg == int(d.Y[i]) {
			ok++
		}
	}
	return float64(ok) / float64(d.N)
}
