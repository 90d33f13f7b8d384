//go:build !openblas

package backend

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

const (
	name        = "gonum (pure Go; build with -tags openblas, as make does when libopenblas-dev and liblapacke-dev are installed, for OpenBLAS)"
	accelerated = false
)

// Cholesky factors the symmetric positive definite n×n row-major matrix a
// (its upper triangle is read) in place: the upper triangle becomes U with
// A = UᵀU. ok is false when a is not positive definite.
func Cholesky(n int, a []float64) (ok bool, err error) {
	if len(a) < n*n {
		return false, fmt.Errorf("Cholesky: buffer too small for n = %d", n)
	}
	_, ok = lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: a[:n*n]})
	return ok, nil
}

// CholeskyRcond estimates the reciprocal condition number (1-norm) of the
// matrix whose Cholesky factor Cholesky left in u, given that matrix's
// 1-norm (LAPACK dpocon).
func CholeskyRcond(n int, u []float64, anorm float64) (float64, error) {
	if n == 0 {
		return 1, nil
	}
	t := blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: u[:n*n]}
	return lapack64.Pocon(t, anorm, make([]float64, 3*n), make([]int, n)), nil
}

// SymEig computes all eigenvalues (ascending, into w) and eigenvectors of
// the symmetric n×n row-major matrix a, which is overwritten by the
// eigenvectors as its rows (symEigGo).
func SymEig(n int, a, w []float64) error { return symEigGo(n, a, w) }

// SymEig32 is SymEig on float32 data (computed in float64 here).
func SymEig32(n int, a, w []float32) error {
	a64 := make([]float64, n*n)
	for i, v := range a[:n*n] {
		a64[i] = float64(v)
	}
	w64 := make([]float64, n)
	if err := SymEig(n, a64, w64); err != nil {
		return err
	}
	for i, v := range a64 {
		a[i] = float32(v)
	}
	for i, v := range w64 {
		w[i] = float32(v)
	}
	return nil
}

// NegEig computes the eigenvalues λ ≤ 0 of the symmetric n×n matrix a
// (ascending, into w) and their eigenvectors, as the rows of z (n×n
// capacity), and returns how many there are; a is destroyed.
func NegEig(n int, a, w, z []float64) (int, error) {
	all := make([]float64, n)
	if err := SymEig(n, a, all); err != nil {
		return 0, err
	}
	m := 0
	for m < n && all[m] <= 0 {
		m++
	}
	copy(w, all[:m])
	copy(z, a[:m*n])
	return m, nil
}

// SetThreads has nothing to set: gonum parallelises its own routines.
func SetThreads(int) (restore func()) { return func() {} }

func kernel() string { return "" }
