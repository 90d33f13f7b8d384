package solvers

import (
	"context"
	"fmt"
	"runtime"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/preprocessing"
)

// Remote computes the training data's sums elsewhere — over the shards of
// a dataset on a distributed runner (package runner) — instead of from the
// rows a method is given (Options.Remote). Each part's contributions are
// bounded where the part is read, exactly as on one machine (Accumulate,
// RunPass), so the parts are bounded before they are added; the noise is
// added once, to the sum, here.
//
// t, when not nil, is the feature transform the method's rows go through
// (learned first: transform.go); the transform's own passes get nil.
type Remote interface {
	// Accumulate is Accumulate's statistics of the whole training data.
	Accumulate(ctx context.Context, m int, opt StatsOptions, t *preprocessing.Transform) (*Stats, error)
	// Pass is RunPass's sum over the whole training data.
	Pass(ctx context.Context, p Pass, t *preprocessing.Transform) ([]float64, error)
}

// A Pass is one pass of a method over the rows whose result is a sum over
// rows, so that the passes over disjoint parts of the data (a dataset's
// shards, on a distributed runner) add up to the pass over the whole:
// DP-FC's covariance pass and its gradient steps (Mehta et al. 2023,
// Alg. 1, Lines 1–3 and 5–7), DP-SGD's steps (Alg. 4), DP-Newton's
// Hessians and gradients (Alg. 1, Lines 6–8), and a transform's two
// stages. Each row's contribution is bounded inside the pass (u clipped to
// Clip, each gradient to ClipGrad, transform rows to norm 1), so the parts
// are bounded before they are added; the noise is added once, to the sum.
type Pass struct {
	// Kind is one of the Pass… constants.
	Kind string `json:"kind"`
	// M is the number of classes; Clip and Normalize make u
	// (BiasFeatures: [clip_C(x̂), C]/√2).
	M         int     `json:"m"`
	Clip      float64 `json:"clip"`
	Normalize bool    `json:"normalize"`
	// ClipGrad and Theta (M×D) are a gradient step's (PassGradient); a
	// Newton pass reads Theta.
	ClipGrad float64   `json:"clip_grad,omitempty"`
	Theta    []float64 `json:"theta,omitempty"`
	// Sample, when set, restricts a gradient step to a Poisson sample of
	// the examples; First is the index in the whole dataset of the rows'
	// first example (a runner sets it for each shard), so that every part
	// draws its examples' membership as one machine would.
	Sample *accounting.PoissonSample `json:"sample,omitempty"`
	First  int64                     `json:"first,omitempty"`
	// Classes, Gradient, Counts and ClassSums are a Newton pass's
	// (PassNewton): the classes whose Hessians Σ σ'(θⱼ·u) uuᵀ to sum,
	// and whether to add every class's gradient, the class counts and the
	// class sums of u too.
	Classes   []int `json:"classes,omitempty"`
	Gradient  bool  `json:"gradient,omitempty"`
	Counts    bool  `json:"counts,omitempty"`
	ClassSums bool  `json:"class_sums,omitempty"`
	// Mean is the centre of a transform's second stage, and DP-LP's
	// noisy mean (PassLPGradient); Scale is DP-LP's row norm C.
	Mean  []float64 `json:"mean,omitempty"`
	Scale float64   `json:"scale,omitempty"`
	// Projection (R×dim, row-major), with PassTransformMatrix, makes the
	// rows y = P(x̂ − Mean)/‖P(x̂ − Mean)‖ and the sum R×R (a whitening
	// within a basis's subspace, TransformSpec.Subspace).
	Projection []float64 `json:"projection,omitempty"`
	// Public, DMin and DMax are DPPL-Public(K)'s clipped utilities'
	// (PassPublicUtilities): the public features' path, which every
	// worker reads (Options.PublicPath), and the similarity's clip.
	Public string  `json:"public,omitempty"`
	DMin   float64 `json:"d_min,omitempty"`
	DMax   float64 `json:"d_max,omitempty"`
}

// The passes.
const (
	// PassCovariance sums uuᵀ (D×D, D = dim + 1) and then the class
	// counts (M values) into one vector (DP-FC).
	PassCovariance = "covariance"
	// PassGradient sums the clipped gradients at Theta (M×D), of the
	// sampled examples when Sample is set (DP-FC, DP-SGD).
	PassGradient = "gradient"
	// PassNewton sums, at Theta, the Hessians of Classes (each D×D, in
	// order), then with Gradient every class's gradient (M×D), with
	// Counts the class counts (M), with ClassSums the class sums of u
	// (M×D).
	PassNewton = "newton"
	// PassTransformMean sums the unit rows x̂ (dim values).
	PassTransformMean = "transform-mean"
	// PassTransformSquares sums y∘y and PassTransformMatrix yyᵀ, for the
	// rows centred on Mean and renormalised, y = (x̂ − Mean)/‖x̂ − Mean‖.
	PassTransformSquares = "transform-squares"
	PassTransformMatrix  = "transform-matrix"
	// PassLPMean sums DP-LP's rows scaled to norm Scale, x′ = C·x/‖x‖
	// (dim values), and PassLPGradient its clipped softmax cross-entropy
	// gradients at Theta (M×dim, no bias) on x̃ = x′ − Mean (Tang et al.
	// 2024, App. G: fitLP).
	PassLPMean     = "lp-mean"
	PassLPGradient = "lp-gradient"
	// PassLogReg sums, at Theta (M×(dim+1)), logreg's loss and then its
	// unclipped gradient over u = [x̂, 1]/√2 (1 + M·(dim+1) values): one
	// L-BFGS evaluation.
	PassLogReg = "logreg"
	// PassPublicUtilities sums DPPL-Public(K)'s clipped utilities, per
	// class and public row of Public (M×N values, class by class): a
	// runner's workers compute their shard's with
	// prototypes.ShardUtilities, which reads the public file; RunPass
	// does not (one machine holds the rows and scores them itself).
	PassPublicUtilities = "public-utilities"
)

// RunPass computes p over rows (streamed, nothing kept): the part of the
// sum these rows contribute.
func RunPass(ctx context.Context, rows Rows, p Pass) ([]float64, error) {
	D := rows.Dim() + 1
	switch p.Kind {
	case PassCovariance:
		us := newUStream[float32](rows, p.M, p.Clip, p.Normalize, 0)
		acc := newGramAcc(D, runtime.GOMAXPROCS(0))
		counts := make([]int64, p.M)
		err := us.each(ctx, func(u uBlock[float32]) error {
			// An example's rows add the weighted mean of their uuᵀ
			// (rootWeights: nil, and no scaling, for examples of one
			// row); it counts once.
			eachGroup(u.Groups, 0, u.N, func(a, _ int) { counts[u.Y[a]]++ })
			acc.addScaled(u.X, u.N, rootWeights(u.Groups, u.W, u.N))
			return nil
		})
		if err != nil {
			return nil, err
		}
		out := append(acc.result(), make([]float64, p.M)...)
		for c, n := range counts {
			out[D*D+c] = float64(n)
		}
		return out, nil
	case PassGradient:
		return newGradientPass(newUStream[float64](rows, p.M, p.Clip, p.Normalize, 0)).run(ctx, &Options{}, p)
	case PassNewton:
		if len(p.Theta) != p.M*D {
			return nil, fmt.Errorf("pass %s: θ has %d values; expected %d×%d", p.Kind, len(p.Theta), p.M, D)
		}
		us := newUStream[float64](rows, p.M, p.Clip, p.Normalize, 0)
		np := newNewtonPass(p, D)
		if err := us.each(ctx, np.add); err != nil {
			return nil, err
		}
		return np.vector(), nil
	case PassTransformMean:
		sum, _, err := transformMean(ctx, visitTraining(rows), rows.Dim())
		return sum, err
	case PassTransformSquares, PassTransformMatrix:
		if len(p.Mean) != rows.Dim() {
			return nil, fmt.Errorf("pass %s: a centre of %d values for rows of %d", p.Kind, len(p.Mean), rows.Dim())
		}
		if p.Projection != nil && (p.Kind != PassTransformMatrix || len(p.Projection) == 0 || len(p.Projection)%rows.Dim() != 0) {
			return nil, fmt.Errorf("pass %s: a projection of %d values for rows of %d", p.Kind, len(p.Projection), rows.Dim())
		}
		return transformSecond(ctx, visitTraining(rows), p.Mean, p.Projection, p.Kind == PassTransformMatrix)
	case PassLPMean, PassLPGradient:
		return lpPass(ctx, rows, p)
	case PassLogReg:
		return logregPass(ctx, rows, p)
	case PassPublicUtilities:
		return nil, fmt.Errorf("pass %s is a runner's (prototypes.ShardUtilities)", p.Kind)
	}
	return nil, fmt.Errorf("unknown pass %q", p.Kind)
}

// pass runs p over the training data — elsewhere when o.Remote is set
// (through the transform learned for the method), else over rows
// (RunPass) — and checks that the sum has size values.
func (o *Options) pass(ctx context.Context, rows Rows, p Pass, size int) ([]float64, error) {
	var sum []float64
	var err error
	if o.Remote != nil {
		sum, err = o.Remote.Pass(ctx, p, o.learned)
	} else {
		sum, err = RunPass(ctx, rows, p)
	}
	if err == nil && len(sum) != size {
		err = fmt.Errorf("the %s pass returned %d values; expected %d", p.Kind, len(sum), size)
	}
	return sum, err
}
