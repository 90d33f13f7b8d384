package solvers

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync/atomic"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/internal/backend"
	"github.com/dpfeat/dpfeat/internal/memsize"
	"github.com/dpfeat/dpfeat/internal/phases"
)

func init() {
	psdRule := &Rule{"-1 (project a class's matrix only when its system is not positive definite), 0 (never) or 1 (always)", func(v float64) bool { return v == -1 || v == 0 || v == 1 }}
	Register(Method{Name: "dpls", Reads: []string{OptMemory, OptSigma, OptRunner, OptNPublic}, Params: []Param{
		featureClip,
		lsAlpha,
		{Name: "lambda", Rule: Positive, Derived: true, Doc: "ridge λ (default: the noise's expected spectral norm 2√D·z·C²(√k + α), twice that when the noise dwarfs a class's signal (ρ ≥ 250) and psd ≠ 1, plus 1e-4·(n/M + α·n)/D)"},
		{Name: "psd", Rule: psdRule, Default: -1, Doc: "-1: Cholesky first, a noisy class matrix projected on the PSD cone only when its system is not positive definite; 1: project every noisy matrix (the authors' code); 0: never"},
	}, Private: true, Summary: "DP least squares by sufficient-statistics perturbation (Mehta et al. 2023, Alg. 2)",
		Stream: func(ctx context.Context, r Rows, m int, o *Options) (*Result, error) {
			return fitLS(ctx, r, m, o, true)
		}})
	Register(Method{Name: "ls", Reads: []string{OptMemory, OptRunner}, Params: []Param{
		lsAlpha,
		{Name: "lambda", Rule: Positive, Derived: true, Doc: "ridge λ (default 1e-4·(n/M + α·n)/D, for conditioning)"},
	}, Private: false, Summary: "non-private least squares (the same model as dpls, no clipping, no noise)",
		Stream: func(ctx context.Context, r Rows, m int, o *Options) (*Result, error) {
			return fitLS(ctx, r, m, o, false)
		}})
}

// fitLS is DP-LS (Mehta, Krichene, Thakurta, Kurakin, Cutkosky 2023,
// "Differentially Private Image Classification from Features", Alg. 2) and,
// without noise or clipping, its non-private reference.
//
// Loss (Sec. 2.3): ½ Σᵢ Σⱼ yᵢⱼ(xᵢ·θⱼ − 1)² + α(xᵢ·θⱼ)² + λ‖θⱼ‖², with
// solution θⱼ = (Aⱼ + αG + λI)⁻¹ bⱼ for Aⱼ = Σ_{i∈j} xᵢxᵢᵀ, bⱼ = Σ_{i∈j} xᵢ,
// G = Σᵢ xᵢxᵢᵀ (eq. 6).
//
// Privacy (Thm. 2.2): with features clipped to C and k = 1 positive class
// per example, the releases are G (L2 sensitivity C², Line 2), all Aⱼ
// together (√k·C², Line 4) and all bⱼ together (√k·C, Line 5), each with
// noise z times its sensitivity: three Gaussian releases, accounted exactly
// by GDP (μ = √3/z) rather than the paper's 3/(2z²)-zCDP.
//
// Hyperparameters: clip C (default 1: features are unit-normalised, so no
// clipping happens), alpha (default 1/M, the weight of the negative term:
// each class then weighs its negatives like its positives in total), lambda
// (default: the noise's expected spectral norm, 2√D·z·C²(√k + α), so the
// regulariser just covers the noise — doubled when the noise dwarfs the
// signal, see lambdaScale; plus 1e-4 of the data's mean eigenvalue for
// conditioning), psd (default −1: solve Alg. 2's system directly by
// Cholesky, as the paper does, and project a noisy Aⱼ on the PSD cone only
// when its system is not positive definite; 1 projects every noisy matrix
// first, as the authors' code does — a D³ eigendecomposition per class,
// most of the ImageNet-shape run's time — and 0 never projects).
func fitLS(ctx context.Context, rows Rows, M int, o *Options, private bool) (*Result, error) {
	p := NewParams(o)
	C := 1.0
	var err error
	if private {
		C = p.Get("clip")
	}
	alpha, err := p.Derived("alpha", 1/float64(M))
	if err != nil {
		return nil, err
	}
	psd := 0.0 // the non-private reference has nothing to project
	if private {
		psd = p.Get("psd") // −1, 0 or 1 (its Param.Rule)
	}
	always := psd == 1
	const k = 1.0
	D := rows.Dim()
	if err := o.squares(D, D, 2); err != nil {
		return nil, err
	}
	so := StatsOptions{Normalize: !o.NoNormalize, Gram: true}
	if private {
		so.Clip = C
	}
	// The statistics are sums over rows: one pass accumulates G, the class
	// sums and the class Grams, in chunks of classes when M·D² would not fit
	// in the memory budget (each further chunk is another pass).
	budget := o.memoryBudget()
	chunks := ClassChunks(M, D, budget-int64(D)*int64(D)*12)
	// The accumulators are live until their class is solved, and each
	// solve (one per core at a time) makes a few D×D temporaries: with Go's default pacing the heap
	// could reach twice the budget before a collection. A soft limit just
	// above the budget makes the collector keep up (restored on return).
	prevLimit := debug.SetMemoryLimit(-1)
	debug.SetMemoryLimit(min(prevLimit, budget+budget/8+int64(runtime.GOMAXPROCS(0))*int64(D)*int64(D)*8*8+(256<<20)))
	defer debug.SetMemoryLimit(prevLimit)
	if len(chunks) > 1 {
		size := memsize.String(float64(budget))
		o.note("%s: the %d class matrices of %d×%d do not fit in the memory budget (%s, --memory): %d passes over the data, %d classes each", o.method, M, D, D, size, len(chunks), len(chunks[0]))
	}
	res := &Result{Prep: Preprocessing{Normalize: !o.NoNormalize}, W: make([]float64, M*D), B: make([]float64, M)}
	var projected atomic.Int64 // classes whose system needed the projection
	var G []float64
	var b []float64
	var z, lambda float64
	for ci, chunk := range chunks {
		so.ClassGram = chunk
		so.Gram = ci == 0
		o.progress("%s: pass %d/%d over the data", o.method, ci+1, len(chunks))
		st, err := AccumulateWith(ctx, o, rows, M, so)
		if err != nil {
			return nil, err
		}
		if ci == 0 {
			var n int64
			for _, c := range st.Counts {
				n += c
			}
			G, b = st.Gram, st.Sums
			if private {
				build := func(z float64) []accounting.Mechanism {
					return []accounting.Mechanism{
						{Name: "noisy Gram matrix G", Kind: accounting.KindGaussian, Sensitivity: C * C, NoiseStd: z * C * C, Count: 1},
						{Name: "noisy class Gram matrices A_j", Kind: accounting.KindGaussian, Sensitivity: math.Sqrt(k) * C * C, NoiseStd: z * math.Sqrt(k) * C * C, Count: 1},
						{Name: "noisy class sums b_j", Kind: accounting.KindGaussian, Sensitivity: math.Sqrt(k) * C, NoiseStd: z * math.Sqrt(k) * C, Count: 1},
					}
				}
				var g accounting.Guarantee
				if z, g, err = o.Calibrate(build); err != nil {
					return nil, err
				}
				res.Guarantee, res.NoiseMultiplier = g, z
				res.Prep.Clip = C
				o.released("G", 0, o.Symmetric("G", G, D, z*C*C, C*C), G)
				o.released("b", 0, o.Gaussian("b", b, z*math.Sqrt(k)*C, math.Sqrt(k)*C), b)
				publicN(o, res, int(n))
			} else {
				res.Guarantee = accounting.NonPrivate("non-private reference: no clipping, no noise")
			}
			nf := float64(n)
			if private {
				if nf, err = o.Rows(n); err != nil {
					return nil, err
				}
			}
			if private {
				noteCentring(o, lsCentring(G, b, D, M, nf, z*math.Sqrt(k)*C))
			}
			floor := 1e-4 * (nf/float64(M) + alpha*nf) / float64(D)
			edge := 2 * math.Sqrt(float64(D)) * z * C * C * (math.Sqrt(k) + alpha)
			if _, set := o.Params["lambda"]; private && !set && !always {
				if f, rho := lambdaScale(D, M, z, nf); f > 1 {
					edge *= f
					o.note("%s: the noise's spectral norm is ρ = %.0f times a class's mean eigenvalue (n/(M·D)): λ doubled (with the noisy systems so far from positive definite, the plain edge λ gave 3 points less at ε = 0.01)", o.method, rho)
				}
			}
			if lambda, err = p.Derived("lambda", edge+floor); err != nil {
				return nil, err
			}
		}
		// The noise is drawn in class order (a seeded run reproduces
		// whatever the parallelism); with psd = 1, while earlier classes
		// are projected, each a D³ eigendecomposition (G's with the first
		// chunk: the solves need it); then the solves, in parallel.
		proj := make([][]float64, 0, len(chunk)+1)
		if always && ci == 0 {
			proj = append(proj, G)
		}
		for _, j := range chunk {
			proj = append(proj, st.ClassGram[j])
		}
		errs := make([]error, max(len(chunk), len(proj)))
		backend.Ordered(len(proj), func(a int) func() {
			m := proj[a]
			if private && (a > 0 || !(always && ci == 0)) {
				std := o.Symmetric("A", m, D, z*math.Sqrt(k)*C*C, math.Sqrt(k)*C*C)
				j := a
				if always && ci == 0 {
					j = a - 1 // proj[0] is G
				}
				j = chunk[j]
				o.released("A", j, std, m)
			}
			if !always {
				return nil
			}
			return func() {
				defer phases.Start("PSD projection")()
				if errs[a] = ctx.Err(); errs[a] == nil {
					errs[a] = psdProjectNoisy(m, D)
				}
			}
		})
		if err := firstError(errs); err != nil {
			return nil, err
		}
		var done atomic.Int64
		stopSolve := phases.Start("factorise and solve")
		backend.Parallel(len(chunk), func(a int) {
			j := chunk[a]
			if errs[a] = ctx.Err(); errs[a] != nil {
				return
			}
			// The system Aⱼ + αG + λI is formed in Aⱼ's memory.
			A := st.ClassGram[j]
			form := func(sign float64) {
				symAdd(A, sign*alpha, G)
				addDiag(A, D, sign*lambda)
			}
			form(1)
			bj := b[j*D : (j+1)*D]
			theta, ok, err := solveCholesky(A, D, bj)
			if err == nil && !ok {
				if psd == -1 {
					// Not positive definite: project the noisy Aⱼ
					// (post-processing) and solve again.
					projected.Add(1)
					form(-1)
					if err = psdProjectNoisy(A, D); err == nil {
						form(1)
					}
				}
				if err == nil {
					theta, err = solveSPD(A, D, bj)
				}
			}
			if err != nil {
				errs[a] = fmt.Errorf("class %d: %w", j, err)
				return
			}
			copy(res.W[j*D:], theta)
			o.progress("%s: pass %d/%d: solved class %d/%d", o.method, ci+1, len(chunks), done.Add(1), len(chunk))
		})
		stopSolve()
		if err := firstError(errs); err != nil {
			return nil, err
		}
		for _, j := range chunk {
			delete(st.ClassGram, j)
		}
		if len(chunks) > 1 {
			// The next chunk allocates as much again: collect this one's
			// accumulators now, or the heap may grow to twice the budget
			// before the collector runs on its own.
			runtime.GC()
		}
	}
	if n := projected.Load(); n > 0 {
		o.note("%s: %d of %d class systems were not positive definite: their noisy class matrices were projected on the PSD cone first (post-processing; raise lambda to avoid it)", o.method, n, M)
	}
	p.Record("k", int(k))
	if len(chunks) > 1 {
		p.Record("passes", len(chunks))
	}
	p.Finish(res)
	return res, nil
}

// lambdaScale is the default ridge's multiple of the noise's spectral edge
// 2√D·z·C²(√k + α), from public quantities only: ρ = 2√D·z / (n/(M·D)),
// the edge over a class's mean eigenvalue (unit rows: trace n/M over D
// dimensions). Far from positive definite (ρ ≥ 250), the noisy systems
// solved at the plain edge are barely positive definite and their
// smallest directions amplify the noise; doubling λ bounds their condition
// as the authors' PSD projection does, without its D³ eigendecomposition
// per class. Measured on the Fashion-MNIST private half (3 seeds, bench
// cells): at ε = 0.01 (ρ = 1152 resnet, 408 vit) the plain edge scored
// 0.613 / 0.780, the projection 0.646 / 0.792, 2λ 0.648 / 0.792; at
// ε = 0.03 (ρ = 433 / 153) all three within 0.5 point; at ε = 0.1
// (ρ = 145 / 51) 2λ cost 0.2 point, hence the threshold between.
func lambdaScale(D, M int, z, n float64) (factor, rho float64) {
	rho = 2 * math.Sqrt(float64(D)) * z / (n / float64(M*D))
	if rho >= 250 {
		return 2, rho
	}
	return 1, rho
}

// lsCentring reads Centring from DP-LS's released G and class sums b
// (each coordinate's noise std bStd): Σx = Σ_j b_j, Σ‖x‖² = tr G.
func lsCentring(G, b []float64, D, M int, n, bStd float64) Centring {
	sum := make([]float64, D)
	for j := 0; j < M; j++ {
		for i, v := range b[j*D : (j+1)*D] {
			sum[i] += v
		}
	}
	var tr float64
	for i := 0; i < D; i++ {
		tr += G[i*D+i]
	}
	return centring(sum, float64(M)*bStd*bStd, tr, n)
}
