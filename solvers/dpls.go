package solvers

import (
	"context"
	"math"

	"github.com/dpfeat/dpfeat/accounting"
)

func init() {
	Register(Method{Name: "dpls", Private: true, Summary: "DP least squares by sufficient-statistics perturbation (Mehta et al. 2023, Alg. 2)",
		Run: func(ctx context.Context, d *Data, o *Options) (*Result, error) { return fitLS(ctx, d, o, true) }})
	Register(Method{Name: "ls", Private: false, Summary: "non-private least squares (the same model as dpls, no clipping, no noise)",
		Run: func(ctx context.Context, d *Data, o *Options) (*Result, error) { return fitLS(ctx, d, o, false) }})
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
// regulariser just covers the noise; plus 1e-4 of the data's mean
// eigenvalue for conditioning), psd (default 1: project noisy matrices on
// the PSD cone, as the authors' code does).
func fitLS(ctx context.Context, d *Data, o *Options, private bool) (*Result, error) {
	p := NewParams(o)
	C := 1.0
	var err error
	if private {
		if C, err = p.Positive("clip", 1); err != nil {
			return nil, err
		}
	}
	alpha, err := p.Positive("alpha", 1/float64(d.M))
	if err != nil {
		return nil, err
	}
	psd := p.Get("psd", 1) != 0 && private
	const k = 1.0
	x := d
	if private {
		x = clipRows(d, C)
	}
	D, M := x.D, x.M
	starts := classStarts(x)
	A := make([][]float64, M)
	b := make([][]float64, M)
	G := make([]float64, D*D)
	for j := 0; j < M; j++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		A[j] = make([]float64, D*D)
		block := x.X[starts[j]*D : starts[j+1]*D]
		syrk(A[j], D, block, starts[j+1]-starts[j], 1)
		symAdd(G, 1, A[j])
		b[j] = make([]float64, D)
		for i := starts[j]; i < starts[j+1]; i++ {
			for c, v := range x.Row(i) {
				b[j][c] += v
			}
		}
	}
	res := &Result{Prep: Preprocessing{Normalize: true}}
	z := 0.0
	if private {
		build := func(z float64) []accounting.Mechanism {
			return []accounting.Mechanism{
				{Name: "noisy Gram matrix G", Kind: accounting.KindGaussian, Sensitivity: C * C, NoiseStd: z * C * C, Count: 1},
				{Name: "noisy class Gram matrices A_j", Kind: accounting.KindGaussian, Sensitivity: math.Sqrt(k) * C * C, NoiseStd: z * math.Sqrt(k) * C * C, Count: 1},
				{Name: "noisy class sums b_j", Kind: accounting.KindGaussian, Sensitivity: math.Sqrt(k) * C, NoiseStd: z * math.Sqrt(k) * C, Count: 1},
			}
		}
		var g accounting.Guarantee
		if z, g, err = Calibrate(o, build); err != nil {
			return nil, err
		}
		res.Guarantee, res.NoiseMultiplier = g, z
		res.Prep.Clip = C
		symAdd(G, 1, o.Symmetric("G", D, z*C*C))
		for j := 0; j < M; j++ {
			symAdd(A[j], 1, o.Symmetric("A", D, z*math.Sqrt(k)*C*C))
			for c, v := range o.Gaussian("b", D, z*math.Sqrt(k)*C) {
				b[j][c] += v
			}
		}
		if psd {
			if err := psdProject(G, D); err != nil {
				return nil, err
			}
			for j := 0; j < M; j++ {
				if err := psdProject(A[j], D); err != nil {
					return nil, err
				}
			}
		}
	} else {
		res.Guarantee = accounting.NonPrivate("non-private reference: no clipping, no noise")
	}
	floor := 1e-4 * (float64(d.N)/float64(M) + alpha*float64(d.N)) / float64(D)
	lambda, err := p.Positive("lambda", 2*math.Sqrt(float64(D))*z*C*C*(math.Sqrt(k)+alpha)+floor)
	if err != nil {
		return nil, err
	}
	res.W = make([]float64, M*D)
	res.B = make([]float64, M)
	sys := make([]float64, D*D)
	for j := 0; j < M; j++ {
		copy(sys, A[j])
		symAdd(sys, alpha, G)
		addDiag(sys, D, lambda)
		theta, err := solveSPD(sys, D, b[j])
		if err != nil {
			return nil, err
		}
		copy(res.W[j*D:], theta)
	}
	p.Record("k", int(k))
	if private {
		publicN(res, d.N)
	}
	p.Finish(res)
	return res, nil
}
