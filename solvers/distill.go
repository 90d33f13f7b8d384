package solvers

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dpfeat/dpfeat/internal/protodist"
	"github.com/dpfeat/dpfeat/preprocessing"
)

// Distilled head (TransformSpec.Distill): the fitted classifier labels
// the public rows, and a linear head fitted on them replaces it.
//
// A private model fitted where its noise is small — DPPL-Mean's class
// means within the public rows' cluster span, whose whitening's ridge
// damps the directions of small variance — separates the classes in
// that space's metric only. The head is the ridge least-squares fit of
// its labels (one-hot targets, a bias per class) on the public rows seen
// through the whole whitening: its normal equations weigh every
// direction by the rows' own second moment, undo the ridge's damping,
// and set each class's bias by the rows it drew. It is the distillation
// of a private teacher into a student fitted on public, unlabeled data
// (PATE's student, Papernot et al. 2017, "Semi-supervised knowledge
// transfer for deep learning from private training data", with one
// teacher instead of an ensemble's noisy votes). It reads the release
// and the public rows only: post-processing (Dwork & Roth 2014, Prop.
// 2.1), free. Measured (#41, bench/results/shift-distill.md): see
// ChooseAuto.

// distillRidge is the head's ridge relative to the public rows' count
// (the trace of their second moment, the rows having unit norm): a guard
// for directions no row reaches, not a prior.
const distillRidge = 1e-4

// distillHead replaces res — the method's fit on rows through t — by the
// ridge least-squares head, on the public rows of pub through whole and
// renormalised (at most publicValuesMax values of them, the span's rows:
// capRows), of the labels res gives them through t (teacherLabel).
// The head's preprocessing is unit norm (recordTransform adds whole).
func distillHead(ctx context.Context, res *Result, t, whole *preprocessing.Transform, pub PublicSource, o *Options) error {
	d0, ds, D := pub.Dim(), t.OutDim(pub.Dim()), whole.OutDim(pub.Dim())
	prep := res.Prep // the teacher's, less the transform its rows already passed
	prep.Transform = nil
	dp := prep.PooledDim(ds)
	M := len(res.W) / dp
	if res.Prototypes != nil {
		M = len(res.Prototypes) / (max(res.PerClass, 1) * dp)
	}
	A := D + 1 // the features and a constant 1, for the bias
	gram := make([]float64, A*A)
	rhs := make([]float64, A*M)
	var xs, xt, xw, x []float64
	err := progressSource{capRows(pub, D), "distill: the head", o.progress}.Each(func(block []float64, rows int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		xs = transformBlockOf(t, block[:rows*d0], rows, d0, xs, true)
		if cap(xt) < rows*dp {
			xt = make([]float64, rows*dp)
		}
		// ApplyRows modifies its input: xs is this pass's own.
		prep.ApplyRows(xs, rows, ds, xt[:rows*dp])
		xw = transformBlockOf(whole, block[:rows*d0], rows, d0, xw, true)
		if cap(x) < rows*A {
			x = make([]float64, rows*A)
		}
		x = x[:rows*A]
		for i := range rows {
			row := x[i*A : (i+1)*A]
			copy(row, xw[i*D:(i+1)*D])
			row[D] = 1
			c := teacherLabel(res, xt[i*dp:(i+1)*dp], M)
			for k, v := range row {
				rhs[k*M+c] += v
			}
		}
		blas64.Syrk(blas.Trans, 1, blas64.General{Rows: rows, Cols: A, Stride: A, Data: x},
			1, blas64.Symmetric{Uplo: blas.Upper, N: A, Stride: A, Data: gram})
		return nil
	})
	if err != nil {
		return fmt.Errorf("distilling the classifier on the public rows: %w", err)
	}
	n := gram[A*A-1] // the rows' count
	if n == 0 {
		return fmt.Errorf("distilling the classifier: the public features have no rows")
	}
	for k := range D {
		gram[k*A+k] += distillRidge * n
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(A, gram)) {
		return fmt.Errorf("distilling the classifier: the public rows' second moment is not positive definite")
	}
	var sol mat.Dense
	if err := ch.SolveTo(&sol, mat.NewDense(A, M, rhs)); err != nil {
		return fmt.Errorf("distilling the classifier: %w", err)
	}
	res.W, res.B = make([]float64, M*D), make([]float64, M)
	for c := range M {
		for k := range D {
			res.W[c*D+k] = sol.At(k, c)
		}
		res.B[c] = sol.At(D, c)
	}
	res.Prototypes, res.PerClass, res.Distance = nil, 0, ""
	res.Prep = Preprocessing{Normalize: true}
	return nil
}

// teacherLabel is the class res gives x, a row as its method saw it
// (through its transform and preprocessing): the largest score, ties to
// the lower class, as models scores a classifier file — for prototypes
// protodist.ClassScore (the nearest on average over a class's
// prototypes), else the linear score.
func teacherLabel(res *Result, x []float64, M int) int {
	best, arg := math.Inf(-1), 0
	if res.Prototypes != nil {
		K := max(res.PerClass, 1)
		xn := preprocessing.Norm(x)
		for c := range M {
			if s := protodist.ClassScore(x, xn, res.Prototypes, c, K, res.Distance == "cosine"); s > best {
				best, arg = s, c
			}
		}
		return arg
	}
	D := len(x)
	for c := range M {
		s := 0.0
		if len(res.B) > 0 {
			s = res.B[c]
		}
		for k, v := range x {
			s += res.W[c*D+k] * v
		}
		if s > best {
			best, arg = s, c
		}
	}
	return arg
}
