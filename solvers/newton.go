package solvers

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/internal/backend"
	"github.com/dpfeat/dpfeat/internal/bigmem"
)

func init() {
	Register(Method{Name: "dpnewton", Reads: []string{OptMemory, OptSigma, OptRunner, OptNPublic}, Features: &FeatureMap{Clip: "clip"}, Params: []Param{
		featureClip,
		{Name: "steps", Rule: Whole, Default: 1, Doc: "Newton steps T"},
		newtonLR,
		{Name: "lambda", Rule: Positive, Derived: true, Doc: "ridge λ (default: the Hessian noise's expected spectral norm, plus 1e-4·β_H·C²/D)"},
		newtonBiasInit,
	}, Private: true, Summary: "DP Newton's method on the one-vs-all sigmoid loss (Mehta et al. 2023, Alg. 1)",
		Stream: func(ctx context.Context, r Rows, m int, o *Options) (*Result, error) {
			return fitNewton(ctx, r, m, o, true)
		}})
	Register(Method{Name: "newton", Reads: []string{OptMemory, OptRunner}, Params: []Param{
		{Name: "steps", Rule: Whole, Default: 10, Doc: "Newton steps T"},
		newtonLR,
		{Name: "lambda", Rule: Positive, Derived: true, Doc: "ridge λ (default: 1e-4·β_H/D)"},
		newtonBiasInit,
	}, Private: false, Summary: "non-private Newton's method on the one-vs-all sigmoid loss, to convergence",
		Stream: func(ctx context.Context, r Rows, m int, o *Options) (*Result, error) {
			return fitNewton(ctx, r, m, o, false)
		}})
}

// βH bounds the sigmoid cross-entropy's second derivative: σ(z)(1−σ(z)) ≤ ¼.
const betaH = 0.25

// firstHessianSens is the sensitivity of the first step's Hessian
// Σ σ'(θ·uᵢ) uᵢuᵢᵀ: at the data-independent start every score is the
// initial bias b, so each row adds exactly σ'(b)·uuᵀ, of Frobenius norm
// ≤ σ'(b)·C² (≤ β_H C², equal at b = 0).
func firstHessianSens(C, bias float64) float64 {
	s := Sigmoid(bias)
	return s * (1 - s) * C * C
}

// fitNewton is DP-Newton (Mehta et al. 2023, Alg. 1) and its non-private
// reference. Per class j and step t, with features u clipped to C (bias as a
// constant coordinate, ‖u‖ ≤ C):
//
//	g̃ = (1/n)Σ ℓ'(θⱼ·uᵢ) uᵢ + N(0, (z√M·C/n)²)                (Line 7)
//	H̃ = (1/n)Σ ℓ''(θⱼ·uᵢ) uᵢuᵢᵀ + N(0, (z√M·β_H C²/n)²) + λI (Lines 6, 8; PSD-projected)
//	θⱼ ← θⱼ − η H̃⁻¹ g̃                                         (Line 9)
//
// The step is the Newton step of the regularised objective
// (1/n)Σℓ + (λ/2)‖θⱼ‖²: λθⱼ, a data-independent term, is added to the noisy
// gradient as λI is to the noisy Hessian, so that more steps converge to
// the regularised optimum (the paper's Line 7 leaves it out; from θ = 0, with
// the default T = 1, both agree).
//
// The first step is released once for all classes (issue 18): at the
// data-independent start every θⱼ is the same (zero weights, bias b), so
// every score is b and
//
//	Hⱼ = σ'(b)·Σ uᵢuᵢᵀ       the same matrix for every class,
//	gⱼ = σ(b)·Σ uᵢ − Σ_{i∈j} uᵢ.
//
// Two releases suffice: the shared Hessian (sensitivity σ'(b)C²) and the
// class sums of u (all M together: sensitivity C, one class per example),
// each with noise z times its sensitivity. Σu is read off the noisy
// Hessian's bias column (u's last coordinate is the constant C/√2), and
// each gⱼ is computed from the two. The paper's Alg. 1 releases M
// Hessians and M gradients at z√M each for the same μ: the Hessian noise
// is now √M times smaller (32× at M = 1000) and the gradients' too.
// Later steps (T > 1) release each class's gradient (sensitivity C, since
// |ℓ'| ≤ 1) and Hessian (β_H C²) with noise z√M times that: μ² = 2/z² +
// (T−1)·2M/(z²M) = 2T/z² by exact GDP composition (the paper's
// T/z²-zCDP).
//
// Hyperparameters: clip C (1), steps T (1 private, 10 non-private), lr η (1:
// the Newton step), lambda (the Hessian noise's expected spectral norm
// 2√D·z√M·β_H C²/n, plus 1e-4·β_H C²/D), bias_init (0, as the paper).
//
// The data are streamed: each step is one pass that adds every block's
// gradients (one product Rᵀ·U) and, for each class, its weighted Gram
// Σ ℓ”ᵢ uᵢuᵢᵀ (float32 SYRKs summed in float64), so memory is M·D² plus
// one block, whatever n. When the M Hessians do not fit in the memory
// budget, classes are taken in chunks, one pass each. Class j's Hessian
// only depends on θⱼ, so a chunk's classes are updated as soon as they
// are solved.
func fitNewton(ctx context.Context, rows Rows, M int, o *Options, private bool) (*Result, error) {
	p := NewParams(o)
	C := 1.0
	var err error
	if private {
		C = p.Get("clip")
	}
	T := p.Int("steps")
	lr := p.Get("lr")
	biasInit := p.Get("bias_init")
	D := rows.Dim() + 1
	sm := math.Sqrt(float64(M))
	res := &Result{Prep: Preprocessing{Normalize: !o.NoNormalize}}
	z := 0.0
	if private {
		h0 := firstHessianSens(C, biasInit)
		build := func(z float64) []accounting.Mechanism {
			m := []accounting.Mechanism{
				{Name: "noisy Hessian, first step (one for all classes: every θⱼ starts equal)", Kind: accounting.KindGaussian, Sensitivity: h0, NoiseStd: z * h0, Count: 1},
				{Name: "noisy class sums of u, first step (the gradients follow)", Kind: accounting.KindGaussian, Sensitivity: C, NoiseStd: z * C, Count: 1},
			}
			if T > 1 {
				m = append(m,
					accounting.Mechanism{Name: "noisy gradient of one class, later steps", Kind: accounting.KindGaussian, Sensitivity: C, NoiseStd: z * sm * C, Count: M * (T - 1)},
					accounting.Mechanism{Name: "noisy Hessian of one class, later steps", Kind: accounting.KindGaussian, Sensitivity: betaH * C * C, NoiseStd: z * sm * betaH * C * C, Count: M * (T - 1)})
			}
			return m
		}
		var g accounting.Guarantee
		if z, g, err = o.Calibrate(build); err != nil {
			return nil, err
		}
		res.Guarantee, res.NoiseMultiplier = g, z
		res.Prep.Clip = C
	} else {
		res.Guarantee = accounting.NonPrivate("non-private reference: no clipping, no noise")
	}
	budget := o.memoryBudget()
	if err := o.squares(rows.Dim(), D, 2); err != nil {
		return nil, err
	}
	if k := ClassChunks(M, D, budget); len(k) > 1 {
		o.note("%s: the %d Hessians of %d×%d do not fit in the memory budget (--memory): up to %d passes over the data per step, %d classes each", o.method, M, D, D, len(k), len(k[0]))
	}
	// What the Hessians of a chunk and the solves' D×D temporaries leave
	// of the budget may keep u in memory between passes.
	us := newUStream[float64](rows, M, C, !o.NoNormalize, budget-int64(len(ClassChunks(M, D, budget)[0]))*classBytes(D)-int64(runtime.GOMAXPROCS(0)+1)*int64(D)*int64(D)*32)
	theta := startTheta(M, D, biasInit, C)
	var counts []int64
	var n float64
	var lambda float64
	grad := make([]float64, M*D)
	var classSums []float64 // Σ_{i∈j} uᵢ, for the private first step
	passes := 0
	for t := 0; t < T; t++ {
		clear(grad)
		o.released("theta", t, 0, theta) // each class's releases are taken at its θⱼ here
		// Classes with the same θⱼ (all of them at the start) have the
		// same statistic Σ ℓ''(θⱼ·uᵢ) uᵢuᵢᵀ: it is accumulated once for
		// the group, and each class still gets its own noise, as its own
		// release.
		reps, repOf := distinctRows(theta, M, D)
		chunks := ClassChunks(len(reps), D, budget)
		for ci, chunk := range chunks {
			passes++
			// cls: the chunk's representative classes; at: a class's
			// representative's position in the chunk (−1: another chunk).
			cls := make([]int, len(chunk))
			at := make([]int, M)
			for j := range at {
				at[j] = -1
			}
			for a, r := range chunk {
				cls[a] = reps[r]
			}
			var members []int
			last := make([]int, len(chunk))
			for j := 0; j < M; j++ {
				for a, c := range cls {
					if repOf[j] == c {
						at[j] = a
						members = append(members, j)
						last[a] = j
					}
				}
			}
			o.progress("%s step %d/%d: pass %d/%d over the data", o.method, t+1, T, ci+1, len(chunks))
			np := newNewtonPass(Pass{Kind: PassNewton, M: M, Clip: C, Normalize: !o.NoNormalize, Theta: theta, Classes: cls,
				// (the private first step's gradients follow from its
				// releases: firstNewtonStep)
				Gradient: ci == 0 && (!private || t > 0),
				Counts:   t == 0 && ci == 0, ClassSums: private && t == 0 && ci == 0}, D)
			var err error
			if o.Remote != nil {
				var v []float64
				if v, err = o.pass(ctx, rows, np.p, np.size()); err == nil {
					np.load(v)
				}
			} else {
				err = us.each(ctx, np.add)
			}
			if err != nil {
				return nil, err
			}
			if np.p.Gradient {
				copy(grad, np.grad)
			}
			if np.p.Counts {
				counts = np.counts
			}
			if np.p.ClassSums {
				classSums = np.classSums
			}
			if t == 0 && ci == 0 {
				var total int64
				for _, c := range counts {
					total += c
				}
				n = float64(total)
				if private {
					if n, err = o.Rows(total); err != nil {
						return nil, err
					}
				}
				// The ridge covers the Hessian noise of the noisiest step.
				hessStd := z * firstHessianSens(C, biasInit)
				if T > 1 {
					hessStd = z * sm * betaH * C * C
				}
				if lambda, err = p.Derived("lambda", 2*math.Sqrt(float64(D))*hessStd/n+1e-4*betaH*C*C/float64(D)); err != nil {
					return nil, err
				}
			}
			Hrep := np.hessians()
			if private && t == 0 {
				if len(Hrep) != 1 {
					panic("solvers: DP-Newton's classes do not start at one θ")
				}
				firstNewtonStep(o, Hrep[0], classSums, grad, M, D, z, C, biasInit)
			}
			// Noise in class order (a seeded run reproduces whatever the
			// parallelism), then each class's D³ projection and solve in
			// parallel.
			errs := make([]error, M)
			backend.Ordered(len(members), func(b int) func() {
				j := members[b]
				a := at[j]
				h := Hrep[a]
				if last[a] == j {
					Hrep[a] = nil // the group's last class takes the matrix
				} else {
					h = bigmem.Float64s(D * D)
					copy(h, Hrep[a])
				}
				g := grad[j*D : (j+1)*D]
				if private && t > 0 {
					o.released("gradient", j, o.Gaussian("gradient", g, z*sm*C, C), g)
					o.released("hessian", j, o.Symmetric("hessian", h, D, z*sm*betaH*C*C, betaH*C*C), h)
				}
				return func() {
					if errs[j] = ctx.Err(); errs[j] != nil {
						return
					}
					for k := range g {
						g[k] = g[k]/n + lambda*theta[j*D+k]
					}
					for k := range h {
						h[k] /= n
					}
					if private {
						if errs[j] = psdProjectNoisy(h, D); errs[j] != nil {
							return
						}
					}
					addDiag(h, D, lambda)
					step, err := solveSPD(h, D, g)
					if err != nil {
						errs[j] = fmt.Errorf("newton step %d, class %d: %w", t+1, j, err)
						return
					}
					for k, v := range step {
						theta[j*D+k] -= lr * v
					}
				}
			})
			if err := firstError(errs); err != nil {
				return nil, err
			}
			if len(chunks) > 1 {
				runtime.GC()
			}
		}
		o.progress("%s step %d/%d", o.method, t+1, T)
	}
	if passes > T {
		p.Record("passes", passes)
	}
	res.W, res.B = fromBias(theta, M, D-1, C)
	if private {
		publicN(o, res, int(n))
	}
	p.Finish(res)
	return res, nil
}

// firstNewtonStep makes DP-Newton's first-step releases (see fitNewton):
// the shared Hessian h (in place) and the class sums, and writes each
// class's gradient gⱼ = σ(b)·Σu − Σ_{i∈j} uᵢ into grad, Σu read off h's
// bias column: h[k][D−1] = σ'(b)·(C/√2)·Σuₖ.
func firstNewtonStep(o *Options, h, classSums, grad []float64, M, D int, z, C, bias float64) {
	h0 := firstHessianSens(C, bias)
	o.released("hessian", 0, o.Symmetric("hessian", h, D, z*h0, h0), h)
	o.released("class sums", 0, o.Gaussian("class sums", classSums, z*C, C), classSums)
	sb := Sigmoid(bias)
	f := math.Sqrt2 / (h0 / C) // 1/(σ'(b)·C/√2)
	for j := 0; j < M; j++ {
		for k := 0; k < D; k++ {
			grad[j*D+k] = sb*h[k*D+D-1]*f - classSums[j*D+k]
		}
	}
}

// distinctRows groups the m rows of the m×d matrix theta by exact equality:
// reps lists the first row of each group, repOf[j] the first row equal to
// row j.
func distinctRows(theta []float64, m, d int) (reps, repOf []int) {
	repOf = make([]int, m)
	first := map[string]int{}
	for j := 0; j < m; j++ {
		row := theta[j*d : (j+1)*d]
		key := string(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(row))), len(row)*8))
		r, ok := first[key]
		if !ok {
			r = j
			first[key] = j
			reps = append(reps, j)
		}
		repOf[j] = r
	}
	return reps, repOf
}

// newtonPass is one pass of DP-Newton and its reference (PassNewton): at
// θ (p.Theta), the Hessians Σ ℓ”ᵢ uᵢuᵢᵀ of p.Classes (float32 SYRKs
// summed in float64), and as p asks every class's gradient Σ ℓ'ᵢ uᵢ,
// the class counts and the class sums of u. Here (add, block by block) or
// elsewhere (load: RunPass's vector, the same sums over the parts).
type newtonPass struct {
	p    Pass
	d    int
	acc  []*gramAcc
	hess [][]float64 // the Hessians, once loaded
	// grad (M×D), counts (M) and classSums (M×D), as p asks.
	grad      []float64
	counts    []int64
	classSums []float64
	zbuf      []float64
	w32       sync.Pool
}

func newNewtonPass(p Pass, D int) *newtonPass {
	np := &newtonPass{p: p, d: D, w32: sync.Pool{New: func() any { return new([]float32) }}}
	// Fewer Hessians than cores (one, at the start): each also splits its
	// rows.
	np.acc = make([]*gramAcc, len(p.Classes))
	for a := range np.acc {
		np.acc[a] = newGramAcc(D, runtime.GOMAXPROCS(0)/len(p.Classes))
	}
	if p.Gradient {
		np.grad = make([]float64, p.M*D)
	}
	if p.Counts {
		np.counts = make([]int64, p.M)
	}
	if p.ClassSums {
		np.classSums = make([]float64, p.M*D)
	}
	return np
}

// size is the length of the pass's vector.
func (np *newtonPass) size() int {
	n := len(np.p.Classes) * np.d * np.d
	if np.p.Gradient {
		n += np.p.M * np.d
	}
	if np.p.Counts {
		n += np.p.M
	}
	if np.p.ClassSums {
		n += np.p.M * np.d
	}
	return n
}

// add adds a block's terms.
func (np *newtonPass) add(b uBlock[float64]) error {
	M, D := np.p.M, np.d
	u := &Data{X: b.X, Y: b.Y, N: b.N, D: b.D, M: M, Groups: b.Groups, W: b.W}
	if len(np.zbuf) < u.N*M {
		np.zbuf = make([]float64, max(u.N, uBlockRows)*M)
	}
	zbuf := np.zbuf
	scores(u, np.p.Theta, zbuf)
	// With several rows per example, each weighs 1/k (groups.go): √ of it
	// scales the Hessian's rows, the gradient's residuals take it in
	// addClippedGradient.
	root := rootWeights(u.Groups, u.W, u.N)
	for i := 0; i < u.N; i++ {
		row := zbuf[i*M : (i+1)*M]
		for j := range row {
			row[j] = Sigmoid(row[j])
		}
	}
	// ℓ''ᵢ = σ(1−σ): class j's Hessian is the Gram of the rows scaled by
	// √ℓ''ᵢ.
	backend.Parallel(len(np.p.Classes), func(a int) {
		j := np.p.Classes[a]
		wp := np.w32.Get().(*[]float32)
		defer np.w32.Put(wp)
		if cap(*wp) < u.N*D {
			*wp = make([]float32, max(u.N, uBlockRows)*D)
		}
		w := (*wp)[:u.N*D]
		for i := 0; i < u.N; i++ {
			s := zbuf[i*M+j]
			f := math.Sqrt(s * (1 - s))
			if root != nil {
				f *= root[i]
			}
			for k, v := range u.Row(i) {
				w[i*D+k] = float32(f * v)
			}
		}
		np.acc[a].add(w, u.N)
	})
	if !np.p.Gradient && !np.p.Counts && !np.p.ClassSums {
		return nil
	}
	// Residuals r = σ − y and the gradient sums Rᵀ·U (|ℓ'| ≤ 1 and
	// ‖u‖ ≤ C: no clipping needed).
	for i, y := range u.Y {
		zbuf[i*M+int(y)] -= 1
	}
	// An example counts in its class; its rows add their shares to their
	// labels' sums (a soft label's two rows to two classes).
	share := rowWeights(u.Groups, u.W, u.N)
	eachGroup(u.Groups, 0, u.N, func(a, b int) {
		if np.counts != nil {
			np.counts[u.Y[a]]++
		}
		if np.classSums == nil {
			return
		}
		for i := a; i < b; i++ {
			y := int(u.Y[i])
			sum := np.classSums[y*D : (y+1)*D]
			if share == nil {
				floatsAdd(sum, u.Row(i))
				continue
			}
			for k, v := range u.Row(i) {
				sum[k] += share[i] * v
			}
		}
	})
	if np.grad != nil {
		addClippedGradient(u, zbuf, 0, np.grad)
	}
	return nil
}

// hessians returns the Hessians of p.Classes, in order.
func (np *newtonPass) hessians() [][]float64 {
	if np.hess == nil {
		np.hess = make([][]float64, len(np.acc))
		backend.Parallel(len(np.acc), func(a int) { np.hess[a] = np.acc[a].result() })
		np.acc = nil
	}
	return np.hess
}

// vector lays the sums out as RunPass returns them: the Hessians, then
// the gradient, the counts and the class sums as p asks.
func (np *newtonPass) vector() []float64 {
	v := make([]float64, 0, np.size())
	for _, h := range np.hessians() {
		v = append(v, h...)
	}
	v = append(v, np.grad...)
	for _, c := range np.counts {
		v = append(v, float64(c))
	}
	return append(v, np.classSums...)
}

// load takes the sums from a vector (of size values) laid out as vector
// does.
func (np *newtonPass) load(v []float64) {
	D, M := np.d, np.p.M
	np.hess, np.acc = make([][]float64, len(np.p.Classes)), nil
	for a := range np.hess {
		np.hess[a], v = v[:D*D], v[D*D:]
	}
	if np.grad != nil {
		np.grad, v = v[:M*D], v[M*D:]
	}
	if np.counts != nil {
		for c := range np.counts {
			np.counts[c] = int64(v[c])
		}
		v = v[M:]
	}
	if np.classSums != nil {
		np.classSums = v[:M*D]
	}
}
