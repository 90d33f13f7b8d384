package prototypes

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"github.com/dpfeat/dpfeat/internal/protodist"
	"github.com/dpfeat/dpfeat/preprocessing"
	"github.com/dpfeat/dpfeat/solvers"
)

// MaxRefine bounds DPPL-Mean's refine steps: each is a pass over the
// public rows, and more steps drift from the classes to whatever
// clusters the public rows hold (a second step already lost at
// n·μ ≈ 100 and 160: solvers.AutoRefine).
const MaxRefine = 10

var refineRule = &solvers.Rule{What: fmt.Sprintf("a whole number from 0 to %d", MaxRefine), OK: func(v float64) bool {
	return v >= 0 && v <= MaxRefine && v == math.Trunc(v)
}}

// checkRefine refuses, before anything is released, refine steps without
// public rows to take them on. (Public rows without refine steps are
// only noted, by fitMean: a sweep gives its dataset's public rows to
// every job.)
func checkRefine(o *solvers.Options) error {
	if steps := o.Params["refine"]; steps > 0 && o.Public == nil {
		return fmt.Errorf("dpplmean: refine = %g needs --public (the unlabeled rows its prototypes are refined on)", steps)
	}
	return nil
}

// refine is DPPL-Mean's refinement on unlabeled public rows, steps
// times: every public row (preprocessed by prep, as the training rows
// were) goes to its nearest prototype under dist, and each prototype
// becomes the mean of the rows it drew (for cosine distance, their sum,
// whose direction is what the distance sees). A prototype that drew no
// row keeps its value.
//
// It reads the released prototypes and public rows only: post-processing,
// no privacy cost (Dwork & Roth 2014, Prop. 2.1). Each step is one of
// Lloyd's algorithm started from the noisy prototypes, the
// semi-supervised use of unlabeled data in the tradition of EM on
// labeled and unlabeled documents (Nigam et al. 2000): where the class
// sums' noise dominates (below n·μ ≈ 140 to 180 on bench/shift.sh's
// sets, within and without the public rows' cluster span) and each class
// is one of the rows' clusters, the public rows' own cluster means lie
// nearer the classes' than the released ones do.
// It returns the rows each prototype drew in the last step.
func refine(ctx context.Context, protos []float64, M, D int, prep solvers.Preprocessing, pub solvers.PublicSource, dist string, steps int) ([]int64, error) {
	in := pub.Dim()
	if got := prep.PooledDim(in); got != D {
		panic(fmt.Sprintf("prototypes: public rows of %d features pool to %d, prototypes have %d", in, got, D))
	}
	counts := make([]int64, M)
	sums := make([]float64, M*D)
	var buf, x []float64
	for s := 0; s < steps; s++ {
		clear(sums)
		clear(counts)
		err := pub.Each(func(block []float64, rows int) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if len(x) < rows*D {
				buf, x = make([]float64, rows*in), make([]float64, rows*D)
			}
			// ApplyRows modifies its input: the block belongs to the source.
			copy(buf, block[:rows*in])
			prep.ApplyRows(buf[:rows*in], rows, in, x[:rows*D])
			for i := range rows {
				row := x[i*D : (i+1)*D]
				c := nearest(row, protos, M, D, dist)
				counts[c]++
				floats.Add(sums[c*D:(c+1)*D], row)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("refining the prototypes on the public rows: %w", err)
		}
		for c := range M {
			if counts[c] == 0 {
				continue
			}
			p := protos[c*D : (c+1)*D]
			copy(p, sums[c*D:(c+1)*D])
			if dist == "euclidean" {
				floats.Scale(1/float64(counts[c]), p)
			}
		}
	}
	return counts, nil
}

// nearest is the prototype nearest x under the classifier's own
// distance (protodist.Distance, as models scores), ties to the lower
// class, as prediction breaks them.
func nearest(x, protos []float64, M, D int, dist string) int {
	xn := preprocessing.Norm(x)
	best, arg := math.Inf(1), 0
	for c := range M {
		if d := protodist.Distance(x, xn, protos[c*D:(c+1)*D], dist == "cosine"); d < best {
			best, arg = d, c
		}
	}
	return arg
}
