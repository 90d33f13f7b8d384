//go:build openblas

package backend

// #cgo LDFLAGS: -llapacke -lopenblas
// #include <lapacke.h>
// void openblas_set_num_threads(int num_threads);
// int openblas_get_num_threads(void);
// int blas_thread_shutdown_(void);
// char *openblas_get_corename(void);
import "C"

import (
	"fmt"
	"math"
	"os"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// gonum's LAPACK is blocked and does its heavy
// lifting through blas64, so routing blas64 to OpenBLAS speeds it up too;
// the symmetric eigendecomposition, whose pure-Go eigenvector accumulation
// dominates DP-LS, calls LAPACKE's divide-and-conquer dsyevd directly, and
// the Cholesky factorisation LAPACKE's dpotrf (about 10× gonum's at
// D = 1664; netlib's LAPACKE bindings predate gonum v0.17's LAPACK
// interface).
const (
	name        = "OpenBLAS + LAPACKE dsyevd/dsyevr/dpotrf (cgo, gonum.org/v1/netlib), gonum's LAPACK for the rest"
	accelerated = true
)

func init() {
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
	// dpfeat parallelises in Go (Parallel, Ordered: over classes, over
	// parts of rows), so OpenBLAS computes on the calling thread: its own
	// pool would contend with those goroutines for the cores, and its idle
	// workers spin in sched_yield for a while after every call (measured:
	// a fifth of DP-FC's CPU time on 2 cores). OPENBLAS_NUM_THREADS set by
	// the user wins.
	if os.Getenv("OPENBLAS_NUM_THREADS") == "" && os.Getenv("OMP_NUM_THREADS") == "" {
		C.openblas_set_num_threads(1)
		// The pool OpenBLAS started when it was loaded would spin for
		// its timeout (~0.1 s of a core) before sleeping: stop it now.
		// A later SetThreads(n > 1) starts it again.
		C.blas_thread_shutdown_()
	}
}

func kernel() string { return C.GoString(C.openblas_get_corename()) }

// Cholesky factors the symmetric positive definite n×n row-major matrix a
// (its upper triangle is read) in place: the upper triangle becomes U with
// A = UᵀU (LAPACKE dpotrf). ok is false when a is not positive definite.
func Cholesky(n int, a []float64) (ok bool, err error) {
	if len(a) < n*n {
		return false, fmt.Errorf("Cholesky: buffer too small for n = %d", n)
	}
	if n == 0 {
		return true, nil
	}
	// The row-major upper triangle is the column-major lower one: LAPACK's
	// own layout, which spares LAPACKE a transposed copy.
	info := C.LAPACKE_dpotrf(C.LAPACK_COL_MAJOR, 'L', C.lapack_int(n), (*C.double)(unsafe.Pointer(&a[0])), C.lapack_int(n))
	if info < 0 {
		return false, fmt.Errorf("LAPACKE_dpotrf: argument %d invalid", int(-info))
	}
	return info == 0, nil
}

// SymEig computes all eigenvalues (ascending, into w) and eigenvectors of
// the symmetric n×n row-major matrix a, which is overwritten by the
// eigenvectors as its rows.
func SymEig(n int, a, w []float64) error {
	if len(a) < n*n || len(w) < n {
		return fmt.Errorf("SymEig: buffers too small for n = %d", n)
	}
	if n == 0 {
		return nil
	}
	// A symmetric matrix reads the same in either layout, and LAPACK's
	// column-major eigenvectors are rows in row-major: no transposed
	// copies in LAPACKE.
	info := C.LAPACKE_dsyevd(C.LAPACK_COL_MAJOR, 'V', 'L', C.lapack_int(n),
		(*C.double)(unsafe.Pointer(&a[0])), C.lapack_int(n), (*C.double)(unsafe.Pointer(&w[0])))
	if info != 0 {
		return fmt.Errorf("LAPACKE_dsyevd: info %d (the eigendecomposition did not converge)", int(info))
	}
	return nil
}

// SymEig32 is SymEig in float32 (LAPACKE ssyevd): about twice as fast,
// for matrices whose own noise dwarfs float32 rounding.
func SymEig32(n int, a, w []float32) error {
	if len(a) < n*n || len(w) < n {
		return fmt.Errorf("SymEig32: buffers too small for n = %d", n)
	}
	if n == 0 {
		return nil
	}
	info := C.LAPACKE_ssyevd(C.LAPACK_COL_MAJOR, 'V', 'L', C.lapack_int(n),
		(*C.float)(unsafe.Pointer(&a[0])), C.lapack_int(n), (*C.float)(unsafe.Pointer(&w[0])))
	if info != 0 {
		return fmt.Errorf("LAPACKE_ssyevd: info %d (the eigendecomposition did not converge)", int(info))
	}
	return nil
}

// NegEig computes the eigenvalues λ ≤ 0 of the symmetric n×n matrix a
// (ascending, into w) and their eigenvectors, as the rows of z (n×n
// capacity), and returns how many there are; a is destroyed. LAPACKE
// dsyevr (MRRR) computes only those: cheaper than all of them when the
// PSD projection needs just the part to remove.
func NegEig(n int, a, w, z []float64) (int, error) {
	if len(a) < n*n || len(w) < n || len(z) < n*n {
		return 0, fmt.Errorf("NegEig: buffers too small for n = %d", n)
	}
	if n == 0 {
		return 0, nil
	}
	var m C.lapack_int
	isuppz := make([]C.lapack_int, 2*n)
	// Column-major: the row-major upper triangle is LAPACK's lower one,
	// and eigenvector k is z[k·n : (k+1)·n].
	info := C.LAPACKE_dsyevr(C.LAPACK_COL_MAJOR, 'V', 'V', 'L', C.lapack_int(n),
		(*C.double)(unsafe.Pointer(&a[0])), C.lapack_int(n), C.double(math.Inf(-1)), 0, 0, 0, 0,
		&m, (*C.double)(unsafe.Pointer(&w[0])), (*C.double)(unsafe.Pointer(&z[0])), C.lapack_int(n), &isuppz[0])
	if info != 0 {
		return 0, fmt.Errorf("LAPACKE_dsyevr: info %d (the eigendecomposition did not converge)", int(info))
	}
	return int(m), nil
}

// SetThreads sets how many threads OpenBLAS computes with (benchmarks
// compare against its multi-threaded peak) and returns a function that
// restores the previous number.
func SetThreads(n int) (restore func()) {
	prev := C.openblas_get_num_threads()
	C.openblas_set_num_threads(C.int(n))
	return func() { C.openblas_set_num_threads(prev) }
}

// CholeskyRcond estimates the reciprocal condition number (1-norm) of the
// matrix whose Cholesky factor Cholesky left in u, given that matrix's
// 1-norm (LAPACKE dpocon).
func CholeskyRcond(n int, u []float64, anorm float64) (float64, error) {
	if n == 0 {
		return 1, nil
	}
	var rcond C.double
	info := C.LAPACKE_dpocon(C.LAPACK_COL_MAJOR, 'L', C.lapack_int(n), (*C.double)(unsafe.Pointer(&u[0])), C.lapack_int(n), C.double(anorm), &rcond)
	if info != 0 {
		return 0, fmt.Errorf("LAPACKE_dpocon: info %d", int(info))
	}
	return float64(rcond), nil
}
