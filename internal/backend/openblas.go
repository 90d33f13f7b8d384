//go:build openblas

package backend

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// gonum's LAPACK (Cholesky, eigendecompositions) is blocked and does its
// heavy lifting through blas64, so routing blas64 to OpenBLAS speeds it up
// too; netlib's LAPACKE bindings predate gonum v0.17's LAPACK interface.
const (
	name        = "OpenBLAS (cgo, gonum.org/v1/netlib), with gonum's LAPACK on top"
	accelerated = true
)

func init() {
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
}
