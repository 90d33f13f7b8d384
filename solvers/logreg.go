package solvers

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"

	"github.com/dpfeat/dpfeat/accounting"
)

func init() {
	Register(Method{Name: "logreg", Params: []Param{
		{Name: "lambda", Rule: Positive, Default: 1e-4, Doc: "ridge λ"},
		{Name: "steps", Rule: Whole, Default: 500, Doc: "most L-BFGS iterations"},
	}, Private: false, Summary: "non-private multinomial logistic regression, L-BFGS to convergence", Run: fitLogReg})
}

// fitLogReg is the non-private reference of softmax (multinomial) logistic
// regression, (1/n)Σᵢ −log softmax(θuᵢ)_{yᵢ} + (λ/2)‖θ‖², minimised with
// L-BFGS until the gradient norm is below 1e-6 (or 500 iterations).
// Features carry the bias as a constant coordinate, as in the other
// logistic methods. Hyperparameters: lambda (1e-4), steps (500: the
// iteration cap).
func fitLogReg(ctx context.Context, d *Data, o *Options) (*Result, error) {
	p := NewParams(o)
	lambda := p.Get("lambda")
	maxIter := p.Int("steps")
	const big = 1e6 // no clipping: the clip norm is far above unit-norm rows
	u := withBias(d, 1)
	M, D, n := u.M, u.D, float64(u.Examples())
	w := rowWeights(u.Groups, u.W, u.N) // an example's rows weigh their shares
	zbuf := make([]float64, u.N*M)
	objective := func(theta, grad []float64) float64 {
		scores(u, theta, zbuf)
		var loss float64
		for i := 0; i < u.N; i++ {
			row := zbuf[i*M : (i+1)*M]
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
		var reg float64
		for _, v := range theta {
			reg += v * v
		}
		if grad != nil {
			g := clippedGradientSum(u, zbuf, big)
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
	result, err := optimize.Minimize(problem, make([]float64, M*D), settings, &optimize.LBFGS{})
	if err != nil && result == nil {
		return nil, fmt.Errorf("logreg: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &Result{Prep: Preprocessing{Normalize: !o.NoNormalize}} // as Prepare made the rows
	res.Guarantee = accounting.NonPrivate("non-private reference: no clipping, no noise")
	res.W, res.B = fromBias(result.X, M, d.D, 1)
	p.Record("iterations", result.Stats.MajorIterations)
	p.Finish(res)
	return res, nil
}
