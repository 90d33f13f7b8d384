package solvers

import (
	"context"
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/dpfeat/dpfeat/internal/backend"
)

// partRows is the least number of rows worth a goroutine in the products
// below.
const partRows = 256

// rowParts is how many parallel parts of rows a product over u uses.
func rowParts(u *Data) int { return max(1, min(runtime.GOMAXPROCS(0), u.N/partRows)) }

// scores computes Z = U·θᵀ (N×M) for features U (N×D) and θ (M×D), in
// parallel parts of rows.
func scores(u *Data, theta []float64, z []float64) {
	parts := rowParts(u)
	backend.Parallel(parts, func(q int) {
		lo, hi := q*u.N/parts, (q+1)*u.N/parts
		a := blas64.General{Rows: hi - lo, Cols: u.D, Stride: u.D, Data: u.X[lo*u.D : hi*u.D]}
		b := blas64.General{Rows: u.M, Cols: u.D, Stride: u.D, Data: theta}
		c := blas64.General{Rows: hi - lo, Cols: u.M, Stride: u.M, Data: z[lo*u.M : hi*u.M]}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, a, b, 0, c)
	})
}

// clippedGradientSum returns Σᵢ clip_C(∇ℓᵢ) (M×D) where ∇ℓᵢ = rᵢ ⊗ uᵢ is
// example i's gradient over all classes jointly (see addClippedGradient).
func clippedGradientSum(u *Data, r []float64, clip float64) []float64 {
	scaled := make([]float64, len(r))
	copy(scaled, r)
	g := make([]float64, u.M*u.D)
	addClippedGradient(u, scaled, clip, g)
	return g
}

// addClippedGradient adds Σᵢ clip_C(rᵢ ⊗ uᵢ) to g (M×D), scaling the
// residuals r in place. The norm factorizes, ‖rᵢ ⊗ uᵢ‖_F = ‖rᵢ‖·‖uᵢ‖, so
// per-example gradients are never formed: each residual row is scaled by
// min(1, C′/(‖rᵢ‖‖uᵢ‖)) with C′ = C·clipMargin (rounding cannot take a
// norm above C), and the sum is one matrix product Rᵀ·U. clip ≤ 0 does
// not clip. With several rows per example (u.Groups), each example's
// (weighted) mean gradient is clipped (groups.go); unclipped, its rows
// weigh their shares.
func addClippedGradient(u *Data, r []float64, clip float64, g []float64) {
	m, d := u.M, u.D
	// Parts of rows in parallel, each into its own sum, added in part
	// order: the result does not depend on scheduling.
	parts := rowParts(u)
	bounds := splitParts(u.Groups, u.N, parts)
	sums := make([][]float64, parts)
	lim := clip * clipMargin
	backend.Parallel(parts, func(q int) {
		lo, hi := bounds[q], bounds[q+1]
		eachGroup(u.Groups, lo, hi, func(a, b int) {
			if b-a > 1 {
				clipGroup(r, m, u.Row, func(v int) float64 { x := u.Row(v); return dot64(x, x) }, a, b, lim, u.W)
				return
			}
			row := r[a*m : (a+1)*m]
			if clip <= 0 {
				return
			}
			if n := l2(row) * l2(u.Row(a)); n > lim {
				f := lim / n
				for j := range row {
					row[j] *= f
				}
			}
		})
		out := g
		if q > 0 {
			sums[q] = make([]float64, m*d)
			out = sums[q]
		}
		a := blas64.General{Rows: hi - lo, Cols: m, Stride: m, Data: r[lo*m : hi*m]}
		b := blas64.General{Rows: hi - lo, Cols: d, Stride: d, Data: u.X[lo*d : hi*d]}
		c := blas64.General{Rows: m, Cols: d, Stride: d, Data: out}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, a, b, 1, c)
	})
	for _, s := range sums[1:] {
		for i, v := range s {
			g[i] += v
		}
	}
}

// gradientBlock adds a block's clipped gradient sum at θ (M×D) to out:
// scores Z = U·θᵀ, residuals r = σ(Z) − y, each example's joint gradient
// rᵢ ⊗ uᵢ clipped to clip (addClippedGradient), all in float64 (z is
// scratch for N×M scores). The sum is a float64 GEMM of float64 terms:
// its rounding is what accounting.SumSlack covers. (DP-FC summed float32
// blocks here; their rounding, up to γ_b·n·C for blocks of b rows in
// float32, is not bounded by the release's sensitivity — the Gram
// matrices had left float32 for that reason, #15.)
func gradientBlock(u *Data, theta []float64, clip float64, z, out []float64) {
	scores(u, theta, z)
	residuals(u, z)
	addClippedGradient(u, z, clip, out)
}

// residuals turns scores into the one-vs-all sigmoid residuals
// r_ij = σ(z_ij) − y_ij in place: the derivative of the sigmoid
// cross-entropy ℓ(z, y) = −y log σ(z) − (1−y) log(1 − σ(z)), |ℓ'| ≤ 1.
func residuals(u *Data, z []float64) {
	for i := 0; i < u.N; i++ {
		row := z[i*u.M : (i+1)*u.M]
		for j := range row {
			row[j] = Sigmoid(row[j])
		}
		row[u.Y[i]] -= 1
	}
}

// gradientPass is a gradient step's pass (PassGradient) of the logistic
// methods that clip per-example gradients (DP-FC, DP-SGD): elsewhere when
// o.Remote is set, else over us, block by block (gradientBlock). With u
// in memory each core takes a run of blocks into its own running sum;
// streamed, each block's rows are split over the cores. With a Poisson
// sample, each block is first gathered to its sampled examples' rows.
type gradientPass struct {
	us   *uStream[float64]
	part [][]float64 // each worker's running sum
	sum  []float64
	z    [][]float64 // each worker's scores
	kept []*Data     // each worker's sampled rows
}

func newGradientPass(us *uStream[float64]) *gradientPass {
	w := us.workers()
	return &gradientPass{us: us, part: make([][]float64, w), z: make([][]float64, w), kept: make([]*Data, w)}
}

// run returns the sum of p's pass (M×D), valid until the next run.
func (g *gradientPass) run(ctx context.Context, o *Options, p Pass) ([]float64, error) {
	D := g.us.dim()
	if len(p.Theta) != p.M*D {
		return nil, fmt.Errorf("pass %s: θ has %d values; expected %d×%d", p.Kind, len(p.Theta), p.M, D)
	}
	if o.Remote != nil {
		return o.pass(ctx, nil, p, p.M*D)
	}
	if g.sum == nil {
		g.sum = make([]float64, p.M*D)
		for w := range g.part {
			g.part[w] = make([]float64, p.M*D)
		}
	}
	clear(g.sum)
	for _, s := range g.part {
		clear(s)
	}
	var member func(int64) bool
	if p.Sample != nil {
		var err error
		if member, err = p.Sample.Member(); err != nil {
			return nil, err
		}
	}
	err := g.us.eachOn(ctx, func(w int, b uBlock[float64]) error {
		u := &Data{X: b.X, Y: b.Y, N: b.N, D: b.D, M: p.M, Groups: b.Groups, W: b.W}
		if member != nil {
			u = g.sampled(w, u, p.First+b.First, member)
		}
		if len(g.z[w]) < u.N*p.M {
			g.z[w] = make([]float64, max(u.N, uBlockRows)*p.M)
		}
		out := g.sum
		if g.us.cached {
			out = g.part[w]
		}
		gradientBlock(u, p.Theta, p.ClipGrad, g.z[w][:u.N*p.M], out)
		return nil
	})
	for _, s := range g.part {
		floatsAdd(g.sum, s)
	}
	return g.sum, err
}

// sampled returns the rows of u's examples in the sample (u's example e is
// number first + e), gathered into worker w's buffer.
func (g *gradientPass) sampled(w int, u *Data, first int64, member func(int64) bool) *Data {
	k := g.kept[w]
	if k == nil {
		k = &Data{}
		g.kept[w] = k
	}
	k.X, k.Y, k.Groups, k.W, k.N, k.D, k.M = k.X[:0], k.Y[:0], k.Groups[:0], k.W[:0], 0, u.D, u.M
	e := first
	eachGroup(u.Groups, 0, u.N, func(a, b int) {
		if member(e) {
			k.X, k.Y = append(k.X, u.X[a*u.D:b*u.D]...), append(k.Y, u.Y[a:b]...)
			if u.Groups != nil {
				k.Groups = append(k.Groups, int32(b-a))
			}
			if u.W != nil {
				k.W = append(k.W, u.W[a:b]...)
			}
		}
		e++
	})
	k.N = len(k.Y)
	out := *k
	if u.Groups == nil {
		out.Groups = nil
	}
	if u.W == nil {
		out.W = nil
	}
	return &out
}
