package solvers

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"

	"github.com/dpfeat/dpfeat/accounting"
)

func init() {
	Register(Method{Name: "logreg", Params: []Param{
		{Name: "lambda", Rule: Positive, Default: 1e-4, Doc: "ridge λ"},
		{Name: "steps", Rule: Whole, Default: 500, Doc: "most L-BFGS iterations"},
	}, Reads: []string{OptRunner}, Private: false, Summary: "non-private multinomial logistic regression, L-BFGS to convergence", Run: fitLogReg, Stream: fitLogRegStream})
}

// fitLogReg is the non-private reference of softmax (multinomial) logistic
// regression, (1/n)Σᵢ −log softmax(θuᵢ)_{yᵢ} + (λ/2)‖θ‖², minimised with
// L-BFGS until the gradient norm is below 1e-6 (or 500 iterations).
// Features carry the bias as a constant coordinate, as in the other
// logistic methods. Hyperparameters: lambda (1e-4), steps (500: the
// iteration cap).
func fitLogReg(ctx context.Context, d *Data, o *Options) (*Result, error) {
	u := withBias(d, 1)
	zbuf := make([]float64, u.N*u.M)
	sums := func(_ context.Context, theta, grad []float64) (float64, error) {
		return logregBlock(u, theta, zbuf, grad), nil
	}
	return logisticRegression(ctx, sums, u.M, d.D, float64(u.Examples()), o)
}

// fitLogRegStream is logreg over a stream of rows: on a runner, each
// objective is a pass (PassLogReg); here, the rows are read into memory
// and prepared (PrepareRows), as logreg always held them.
func fitLogRegStream(ctx context.Context, rows Rows, m int, o *Options) (*Result, error) {
	if o.Remote == nil {
		d, err := PrepareRows(rows, m, !o.NoNormalize)
		if err != nil {
			return nil, err
		}
		return fitLogReg(ctx, d, o)
	}
	D := rows.Dim()
	n := float64(o.examples)
	// A pass gives the loss and the gradient together; L-BFGS asks for
	// them in two calls at the same θ, which the last pass answers.
	var last, v []float64
	sums := func(ctx context.Context, theta, grad []float64) (float64, error) {
		if v == nil || !slices.Equal(theta, last) {
			var err error
			if v, err = o.pass(ctx, rows, Pass{Kind: PassLogReg, M: m, Normalize: !o.NoNormalize, Theta: theta}, 1+m*(D+1)); err != nil {
				return 0, err
			}
			last = append(last[:0], theta...)
		}
		if grad != nil {
			copy(grad, v[1:])
		}
		return v[0], nil
	}
	return logisticRegression(ctx, sums, m, D, n, o)
}

// logregBlock returns Σ w·(log Σ exp z − z_y) over u's rows (w an
// example's rows' shares) at θ, and adds the gradient sum Σ w·(softmax(z)
// − e_y) ⊗ u to grad when it is not nil; z is scratch of N·M values.
func logregBlock(u *Data, theta, z, grad []float64) float64 {
	M := u.M
	w := rowWeights(u.Groups, u.W, u.N) // an example's rows weigh their shares
	scores(u, theta, z)
	var loss float64
	for i := 0; i < u.N; i++ {
		row := z[i*M : (i+1)*M]
		lse := floats.LogSumExp(row)
		if w == nil {
			loss += lse - row[u.Y[i]]
		} else {
			loss += w[i] * (lse - row[u.Y[i]])
		}
		for j := range row {
			row[j] = math.Exp(row[j] - lse) // softmax
		}
		row[u.Y[i]] -= 1
	}
	if grad != nil {
		const big = 1e6 // no clipping: the clip norm is far above unit-norm rows
		addClippedGradient(u, z, big, grad)
	}
	return loss
}

// logisticRegression minimises the objective over its sums (in memory or
// in passes): L-BFGS on (1/n)·loss + (λ/2)‖θ‖², θ M×(D+1).
func logisticRegression(ctx context.Context, sums func(ctx context.Context, theta, grad []float64) (float64, error), M, D int, n float64, o *Options) (*Result, error) {
	p := NewParams(o)
	lambda := p.Get("lambda")
	maxIter := p.Int("steps")
	var failed error
	g := make([]float64, M*(D+1))
	objective := func(theta, grad []float64) float64 {
		if failed != nil {
			return math.NaN()
		}
		var gs []float64
		if grad != nil {
			clear(g)
			gs = g
		}
		loss, err := sums(ctx, theta, gs)
		if err != nil {
			failed = err
			return math.NaN()
		}
		var reg float64
		for _, v := range theta {
			reg += v * v
		}
		if grad != nil {
			for k := range grad {
				grad[k] = g[k]/n + lambda*theta[k]
			}
		}
		return loss/n + lambda/2*reg
	}
	problem := optimize.Problem{
		Func: func(x []float64) float64 { return objective(x, nil) },
		Grad: func(grad, x []float64) { objective(x, grad) },
	}
	settings := &optimize.Settings{GradientThreshold: 1e-6, MajorIterations: maxIter}
	result, err := optimize.Minimize(problem, make([]float64, M*(D+1)), settings, &optimize.LBFGS{})
	if failed != nil {
		return nil, failed
	}
	if err != nil && result == nil {
		return nil, fmt.Errorf("logreg: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &Result{Prep: Preprocessing{Normalize: !o.NoNormalize}} // as Prepare made the rows
	res.Guarantee = accounting.NonPrivate("non-private reference: no clipping, no noise")
	res.W, res.B = fromBias(result.X, M, D, 1)
	p.Record("iterations", result.Stats.MajorIterations)
	p.Finish(res)
	return res, nil
}

// logregPass is RunPass's PassLogReg, in blocks of whole examples.
func logregPass(ctx context.Context, rows Rows, p Pass) ([]float64, error) {
	D := rows.Dim()
	dd := D + 1
	if len(p.Theta) != p.M*dd {
		return nil, fmt.Errorf("pass %s: θ has %d values; expected %d×%d", p.Kind, len(p.Theta), p.M, dd)
	}
	out := make([]float64, 1+p.M*dd)
	var u Data
	var z []float64
	err := exampleBlocks(ctx, rows, p.M, func(x []float64, y []int32, sizes []int32, w []float64) error {
		n := len(y)
		u = Data{X: growFloats(u.X, n*dd), Y: y, N: n, D: dd, M: p.M, Groups: sizes, W: w}
		for i := 0; i < n; i++ {
			fillU(x[i*D:(i+1)*D], u.Row(i), 1, p.Normalize)
		}
		z = growFloats(z, n*p.M)
		out[0] += logregBlock(&u, p.Theta, z, out[1:])
		return nil
	})
	return out, err
}
