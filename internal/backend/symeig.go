package backend

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
)

// symEigGo is the pure-Go SymEig: all eigenvalues (ascending, into w) and
// eigenvectors (as the rows of a, which is overwritten) of the symmetric
// n×n row-major matrix a.
//
// It is gonum's LAPACK but for the last stage. The Householder reduction
// to tridiagonal form A = Q·T·Qᵀ is gonum's blocked Dsytrd, and Q is
// formed by its Dorgtr, as in gonum's Dsyev. gonum's Dsteqr then applies
// each QR sweep's plane rotations to pairs of Q's columns, which in
// row-major memory are n cache lines apart: at n = 2048 that took 103 of
// mat.EigenSym's 113 s (bench/results/eig.md). Here Qᵀ is kept instead,
// so that a rotation of columns i and i+1 is one of two contiguous rows,
// and the sweep's rotations, recorded first, are applied to blocks of
// columns in parallel. The sweep itself is EISPACK's tql2 (implicit QL
// with Wilkinson-style shifts, as in JAMA; Bowdler, Martin, Reinsch and
// Wilkinson 1968), which converges in about two sweeps per eigenvalue.
func symEigGo(n int, a, w []float64) error {
	if len(a) < n*n || len(w) < n {
		return fmt.Errorf("SymEig: buffers too small for n = %d", n)
	}
	if n == 0 {
		return nil
	}
	impl := gonum.Implementation{}
	d, e := w[:n], make([]float64, n) // e[i] couples i and i+1; e[n-1] = 0
	tau := make([]float64, max(n-1, 1))
	query := []float64{0}
	impl.Dsytrd(blas.Upper, n, a, n, d, e[:n-1], tau[:n-1], query, -1)
	lwork := int(query[0])
	impl.Dorgtr(blas.Upper, n, a, n, tau[:n-1], query, -1)
	lwork = max(lwork, int(query[0]), 1)
	work := make([]float64, lwork)
	impl.Dsytrd(blas.Upper, n, a, n, d, e[:n-1], tau[:n-1], work, lwork)
	impl.Dorgtr(blas.Upper, n, a, n, tau[:n-1], work, lwork)
	// a holds Q; its transpose's rows are Q's columns.
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			a[i*n+j], a[j*n+i] = a[j*n+i], a[i*n+j]
		}
	}
	if err := tql2(n, d, e, a); err != nil {
		return err
	}
	// Ascending, the rows with their eigenvalues (selection sort: n row
	// swaps at most).
	row := make([]float64, n)
	for i := 0; i < n-1; i++ {
		k := i
		for j := i + 1; j < n; j++ {
			if d[j] < d[k] {
				k = j
			}
		}
		if k != i {
			d[i], d[k] = d[k], d[i]
			copy(row, a[i*n:(i+1)*n])
			copy(a[i*n:(i+1)*n], a[k*n:(k+1)*n])
			copy(a[k*n:(k+1)*n], row)
		}
	}
	return nil
}

// tql2 diagonalises the symmetric tridiagonal matrix with diagonal d and
// off-diagonal e (e[i] couples i and i+1, e[n-1] = 0) by implicit QL
// sweeps, d becoming its eigenvalues (unordered) and every rotation
// applied to the rows of vt (n×n row-major, Qᵀ on entry: its rows
// become the eigenvectors of Q·T·Qᵀ).
func tql2(n int, d, e, vt []float64) error {
	const eps = 0x1p-52
	cs := make([]float64, 2*n) // one sweep's rotations: cs[2i], cs[2i+1] = c, s
	f, tst1 := 0.0, 0.0
	for l := 0; l < n; l++ {
		// Find a small off-diagonal element.
		tst1 = math.Max(tst1, math.Abs(d[l])+math.Abs(e[l]))
		m := l
		for m < n-1 && math.Abs(e[m]) > eps*tst1 {
			m++
		}
		// If m == l, d[l] is an eigenvalue; otherwise iterate.
		for iter := 0; m > l; iter++ {
			if iter == 30*n {
				return fmt.Errorf("SymEig: the %d×%d eigendecomposition did not converge", n, n)
			}
			// The shift.
			g := d[l]
			p := (d[l+1] - g) / (2 * e[l])
			r := math.Hypot(p, 1)
			if p < 0 {
				r = -r
			}
			d[l] = e[l] / (p + r)
			d[l+1] = e[l] * (p + r)
			dl1 := d[l+1]
			h := g - d[l]
			for i := l + 2; i < n; i++ {
				d[i] -= h
			}
			f += h
			// The implicit QL sweep.
			p = d[m]
			c, c2, c3 := 1.0, 1.0, 1.0
			el1 := e[l+1]
			s, s2 := 0.0, 0.0
			for i := m - 1; i >= l; i-- {
				c3, c2, s2 = c2, c, s
				g = c * e[i]
				h = c * p
				r = math.Hypot(p, e[i])
				e[i+1] = s * r
				s = e[i] / r
				c = p / r
				p = c*d[i] - s*g
				d[i+1] = h + s*(c*g+s*d[i])
				cs[2*i], cs[2*i+1] = c, s
			}
			rotateRows(vt, n, l, m, cs)
			p = -s * s2 * c3 * el1 * e[l] / dl1
			e[l] = s * p
			d[l] = c * p
			if math.Abs(e[l]) <= eps*tst1 {
				break
			}
		}
		d[l] += f
		e[l] = 0
	}
	return nil
}

// rotateRows applies one sweep's rotations, for i from m−1 down to l,
// (rowᵢ, rowᵢ₊₁) ← (c·rowᵢ − s·rowᵢ₊₁, s·rowᵢ + c·rowᵢ₊₁), to the n×n
// row-major vt: independently per column, so blocks of columns go to
// Parallel.
func rotateRows(vt []float64, n, l, m int, cs []float64) {
	const block = 128
	apply := func(lo, hi int) {
		for i := m - 1; i >= l; i-- {
			c, s := cs[2*i], cs[2*i+1]
			ri := vt[i*n+lo : i*n+hi]
			rj := vt[(i+1)*n+lo : (i+1)*n+hi]
			rj = rj[:len(ri)]
			for k, x := range ri {
				y := rj[k]
				rj[k] = s*x + c*y
				ri[k] = c*x - s*y
			}
		}
	}
	blocks := (n + block - 1) / block
	if blocks == 1 || (m-l)*n < 1<<16 {
		apply(0, n)
		return
	}
	Parallel(blocks, func(b int) { apply(b*block, min((b+1)*block, n)) })
}
