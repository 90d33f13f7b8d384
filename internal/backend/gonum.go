//go:build !openblas

package backend

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

const (
	name        = "gonum (pure Go; build with -tags openblas, as make does when libopenblas-dev and liblapacke-dev are installed, for OpenBLAS)"
	accelerated = false
)

// SymEig computes all eigenvalues (ascending, into w) and eigenvectors of
// the symmetric n×n row-major matrix a, which is overwritten by the
// eigenvectors as its columns.
func SymEig(n int, a, w []float64) error {
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(n, append([]float64(nil), a[:n*n]...)), true) {
		return fmt.Errorf("the %d×%d eigendecomposition did not converge", n, n)
	}
	eig.Values(w[:n])
	v := mat.NewDense(n, n, a[:n*n])
	eig.VectorsTo(v)
	return nil
}
