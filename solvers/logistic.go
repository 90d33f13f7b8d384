package solvers

import (
	"context"
	"math"
	"runtime"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/dpfeat/dpfeat/accounting"
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

// gradient32 computes DP-FC's clipped gradient sums over float32 blocks of
// u: per block, scores Z = U·θᵀ, residuals r = σ(Z) − y, each example's
// joint gradient rᵢ ⊗ uᵢ clipped to C (by scaling rᵢ, as in
// addClippedGradient), and Rᵀ·U, all in float32 SGEMMs over parallel parts
// of rows; each part's block sum (at most uBlockRows terms) is added into
// the float64 total in part order, so the result does not depend on
// scheduling.
type gradient32 struct {
	m, d    int
	theta   []float32
	z, sums [][]float32
	rr      [][]float64 // each part's ‖rᵢ‖², for examples of one row
	// member, when set, is a Poisson sample's membership test: the other
	// examples add nothing (each block is first gathered to its members'
	// rows, in kept[q]).
	member func(example int64) bool
	kept   []keptRows
}

// keptRows is a buffer for a block's sampled rows.
type keptRows struct {
	x      []float32
	y      []int32
	normSq []float64
	groups []int32
	w      []float64
}

func newGradient32(m, d int) *gradient32 {
	parts := runtime.GOMAXPROCS(0)
	g := &gradient32{m: m, d: d, theta: make([]float32, m*d), z: make([][]float32, parts), sums: make([][]float32, parts), rr: make([][]float64, parts), kept: make([]keptRows, parts)}
	for q := range g.z {
		g.z[q] = make([]float32, uBlockRows*m)
		g.sums[q] = make([]float32, m*d)
	}
	return g
}

// setTheta sets the θ (M×D) that the following blocks are scored with.
func (g *gradient32) setTheta(theta []float64) {
	for i, v := range theta {
		g.theta[i] = float32(v)
	}
}

// sample restricts the following blocks' sums to a Poisson sample's
// examples (nil: all of them).
func (g *gradient32) sample(s *accounting.PoissonSample) error {
	g.member = nil
	if s == nil {
		return nil
	}
	member, err := s.Member()
	g.member = member
	return err
}

// add adds the block's clipped gradient sum to total (M×D), its rows split
// over the cores.
func (g *gradient32) add(u uBlock[float32], clip float64, total []float64) {
	u = g.sampled(0, u)
	parts := max(1, min(len(g.z), u.N/partRows))
	b := splitParts(u.Groups, u.N, parts)
	backend.Parallel(parts, func(q int) {
		g.part(q, u, b[q], b[q+1], clip)
	})
	for q := 0; q < parts; q++ {
		for i, v := range g.sums[q] {
			total[i] += float64(v)
		}
	}
}

// addOn adds the whole block's clipped gradient sum to total on the
// calling goroutine, with worker q's buffers: for passes whose blocks are
// shared out among the cores (uStream.eachOn), where splitting every block
// left the cores waiting on each other between blocks.
func (g *gradient32) addOn(q int, u uBlock[float32], clip float64, total []float64) {
	u = g.sampled(q, u)
	g.part(q, u, 0, u.N, clip)
	for i, v := range g.sums[q] {
		total[i] += float64(v)
	}
}

// sampled returns the block's rows of the sampled examples (example e of
// the block is number u.First + e), gathered into buffer q; u itself
// without a sample.
func (g *gradient32) sampled(q int, u uBlock[float32]) uBlock[float32] {
	if g.member == nil {
		return u
	}
	k := &g.kept[q]
	k.x, k.y, k.normSq, k.groups, k.w = k.x[:0], k.y[:0], k.normSq[:0], k.groups[:0], k.w[:0]
	e := u.First
	eachGroup(u.Groups, 0, u.N, func(a, b int) {
		if g.member(e) {
			k.x = append(k.x, u.X[a*u.D:b*u.D]...)
			k.y = append(k.y, u.Y[a:b]...)
			if u.NormSq != nil {
				k.normSq = append(k.normSq, u.NormSq[a:b]...)
			}
			if u.Groups != nil {
				k.groups = append(k.groups, int32(b-a))
			}
			if u.W != nil {
				k.w = append(k.w, u.W[a:b]...)
			}
		}
		e++
	})
	out := uBlock[float32]{X: k.x, Y: k.y, N: len(k.y), D: u.D, First: -1}
	if u.NormSq != nil {
		out.NormSq = k.normSq
	}
	if u.Groups != nil {
		out.Groups = k.groups
	}
	if u.W != nil {
		out.W = k.w
	}
	return out
}

// part computes the clipped gradient sum of rows lo..hi−1 of the block
// (example edges) into g.sums[q]: each example's mean gradient is clipped
// (groups.go).
func (g *gradient32) part(q int, u uBlock[float32], lo, hi int, clip float64) {
	m, d := g.m, g.d
	lim := clip * clipMargin
	if cap(g.z[q]) < (hi-lo)*m {
		g.z[q] = make([]float32, (hi-lo)*m) // an example of more than uBlockRows rows
	}
	x := blas32.General{Rows: hi - lo, Cols: d, Stride: d, Data: u.X[lo*d : hi*d]}
	th := blas32.General{Rows: m, Cols: d, Stride: d, Data: g.theta}
	z := blas32.General{Rows: hi - lo, Cols: m, Stride: m, Data: g.z[q][:(hi-lo)*m]}
	blas32.Gemm(blas.NoTrans, blas.Trans, 1, x, th, 0, z)
	normSq := func(i int) float64 {
		if u.NormSq != nil {
			return u.NormSq[i]
		}
		var uu float64
		for _, v := range u.Row(i) {
			uu += float64(v) * float64(v)
		}
		return uu
	}
	clipRow := func(i int, rr float64) {
		row := z.Data[(i-lo)*m : (i-lo+1)*m]
		if n := math.Sqrt(rr * normSq(i)); n > lim {
			f := float32(lim / n)
			for j := range row {
				row[j] *= f
			}
		}
	}
	if u.Groups != nil && cap(g.rr[q]) < hi-lo {
		g.rr[q] = make([]float64, max(hi-lo, uBlockRows))
	}
	for i := lo; i < hi; i++ {
		row := z.Data[(i-lo)*m : (i-lo+1)*m]
		var rr float64
		for j, s := range row {
			r := Sigmoid(float64(s))
			if int(u.Y[i]) == j {
				r -= 1
			}
			row[j] = float32(r)
			rr += r * r
		}
		if u.Groups == nil {
			clipRow(i, rr)
		} else {
			g.rr[q][i-lo] = rr
		}
	}
	if u.Groups != nil {
		eachGroup(u.Groups, lo, hi, func(a, b int) {
			if b-a == 1 {
				clipRow(a, g.rr[q][a-lo])
				return
			}
			var w []float64
			if u.W != nil {
				w = u.W[lo:hi]
			}
			clipGroup(z.Data, m, func(v int) []float32 { return u.Row(v + lo) }, func(v int) float64 { return normSq(v + lo) }, a-lo, b-lo, lim, w)
		})
	}
	s := blas32.General{Rows: m, Cols: d, Stride: d, Data: g.sums[q]}
	blas32.Gemm(blas.Trans, blas.NoTrans, 1, z, x, 0, s)
}

// gradientPass is a gradient step's pass (PassGradient) of the logistic
// methods that clip per-example gradients (DP-FC, DP-SGD): elsewhere when
// o.Remote is set, else over us, block by block (float32 products,
// float64 total: the noise, z·C per entry, dwarfs the rounding). With u
// in memory each core takes a run of blocks into its own running sum;
// streamed, each block is split over the cores.
type gradientPass struct {
	us   *uStream[float32]
	grad *gradient32
	part [][]float64 // each worker's running sum
	sum  []float64
}

func newGradientPass(us *uStream[float32]) *gradientPass {
	return &gradientPass{us: us, part: make([][]float64, us.workers())}
}

// run returns the sum of p's pass (M×D), valid until the next run.
func (g *gradientPass) run(ctx context.Context, o *Options, p Pass) ([]float64, error) {
	D := g.us.dim()
	if o.Remote != nil {
		return o.pass(ctx, p, p.M*D)
	}
	if g.grad == nil {
		g.grad, g.sum = newGradient32(p.M, D), make([]float64, p.M*D)
		for w := range g.part {
			g.part[w] = make([]float64, p.M*D)
		}
	}
	clear(g.sum)
	for _, s := range g.part {
		clear(s)
	}
	g.grad.setTheta(p.Theta)
	if err := g.grad.sample(p.Sample); err != nil {
		return nil, err
	}
	err := g.us.eachOn(ctx, func(w int, u uBlock[float32]) error {
		if g.us.cached {
			g.grad.addOn(w, u, p.ClipGrad, g.part[w])
		} else {
			g.grad.add(u, p.ClipGrad, g.sum)
		}
		return nil
	})
	for _, s := range g.part {
		floatsAdd(g.sum, s)
	}
	return g.sum, err
}
