package solvers

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// scores computes Z = U·θᵀ (N×M) for features U (N×D) and θ (M×D).
func scores(u *Data, theta []float64, z []float64) {
	a := blas64.General{Rows: u.N, Cols: u.D, Stride: u.D, Data: u.X}
	b := blas64.General{Rows: u.M, Cols: u.D, Stride: u.D, Data: theta}
	c := blas64.General{Rows: u.N, Cols: u.M, Stride: u.M, Data: z}
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, a, b, 0, c)
}

// residuals turns scores into the one-vs-all sigmoid residuals
// r_ij = σ(z_ij) − y_ij in place: the derivative of the sigmoid
// cross-entropy ℓ(z, y) = −y log σ(z) − (1−y) log(1 − σ(z)), |ℓ'| ≤ 1.
func residuals(u *Data, z []float64) {
	for i := 0; i < u.N; i++ {
		row := z[i*u.M : (i+1)*u.M]
		for j := range row {
			row[j] = sigmoid(row[j])
		}
		row[u.Y[i]] -= 1
	}
}

// clippedGradientSum returns Σᵢ clip_C(∇ℓᵢ) (M×D) where ∇ℓᵢ = rᵢ ⊗ uᵢ is
// example i's gradient over all classes jointly (see addClippedGradient).
// rows, when not nil, restricts the sum to those examples.
func clippedGradientSum(u *Data, r []float64, clip float64, rows []int) []float64 {
	scaled := make([]float64, len(r))
	copy(scaled, r)
	if rows != nil {
		in := make([]bool, u.N)
		for _, i := range rows {
			in[i] = true
		}
		for i := 0; i < u.N; i++ {
			if !in[i] {
				clear(scaled[i*u.M : (i+1)*u.M])
			}
		}
	}
	g := make([]float64, u.M*u.D)
	addClippedGradient(u, scaled, clip, g)
	return g
}

// addClippedGradient adds Σᵢ clip_C(rᵢ ⊗ uᵢ) to g (M×D), scaling the
// residuals r in place. The norm factorizes, ‖rᵢ ⊗ uᵢ‖_F = ‖rᵢ‖·‖uᵢ‖, so
// per-example gradients are never formed: each residual row is scaled by
// min(1, C/(‖rᵢ‖‖uᵢ‖)) and the sum is one matrix product Rᵀ·U. clip ≤ 0
// does not clip.
func addClippedGradient(u *Data, r []float64, clip float64, g []float64) {
	m, d := u.M, u.D
	if clip > 0 {
		for i := 0; i < u.N; i++ {
			row := r[i*m : (i+1)*m]
			if n := l2(row) * l2(u.Row(i)); n > clip {
				f := clip / n
				for j := range row {
					row[j] *= f
				}
			}
		}
	}
	a := blas64.General{Rows: u.N, Cols: m, Stride: m, Data: r[:u.N*m]}
	b := blas64.General{Rows: u.N, Cols: d, Stride: d, Data: u.X[:u.N*d]}
	c := blas64.General{Rows: m, Cols: d, Stride: d, Data: g}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, a, b, 1, c)
}
