//go:build openblas

package backend

// #cgo LDFLAGS: -llapacke -lopenblas
// #include <lapacke.h>
import "C"

import (
	"fmt"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// gonum's LAPACK (Cholesky and the rest) is blocked and does its heavy
// lifting through blas64, so routing blas64 to OpenBLAS speeds it up too;
// the symmetric eigendecomposition, whose pure-Go eigenvector accumulation
// dominates DP-LS, calls LAPACKE's divide-and-conquer dsyevd directly
// (netlib's LAPACKE bindings predate gonum v0.17's LAPACK interface).
const (
	name        = "OpenBLAS + LAPACKE dsyevd (cgo, gonum.org/v1/netlib), gonum's LAPACK for the rest"
	accelerated = true
)

func init() {
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
}

// SymEig computes all eigenvalues (ascending, into w) and eigenvectors of
// the symmetric n×n row-major matrix a, which is overwritten by the
// eigenvectors as its columns.
func SymEig(n int, a, w []float64) error {
	if len(a) < n*n || len(w) < n {
		return fmt.Errorf("SymEig: buffers too small for n = %d", n)
	}
	if n == 0 {
		return nil
	}
	info := C.LAPACKE_dsyevd(C.LAPACK_ROW_MAJOR, 'V', 'U', C.lapack_int(n),
		(*C.double)(unsafe.Pointer(&a[0])), C.lapack_int(n), (*C.double)(unsafe.Pointer(&w[0])))
	if info != 0 {
		return fmt.Errorf("LAPACKE_dsyevd: info %d (the eigendecomposition did not converge)", int(info))
	}
	return nil
}
