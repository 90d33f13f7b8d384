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
// mat.EigenSym's 113 s (bench/results/largedim.md). Here Qᵀ is kept
// instead, so that a rotation of columns i and i+1 is one of two
// contiguous rows, and the rotations, queued, are applied a batch of
// sweeps at a time to blocks of columns in parallel (rotations). The
// sweep itself is EISPACK's tql2 (implicit QL, each shift from the
// leading 2×2 block, as in JAMA; Bowdler, Martin, Reinsch and Wilkinson
// 1968), which converges in about two sweeps per eigenvalue.
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
// become the eigenvectors of Q·T·Qᵀ). The recurrence never reads vt, so
// the rotations are queued and applied a batch of sweeps at a time
// (rotations).
func tql2(n int, d, e, vt []float64) error {
	const eps = 0x1p-52
	q := rotations{n: n, vt: vt}
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
			cs := q.sweep(l, m)
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
				cs[2*(i-l)], cs[2*(i-l)+1] = c, s
			}
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
	q.flush()
	return nil
}

// rotations queues QL sweeps' plane rotations for the rows of vt and
// applies them a batch at a time, one block of columns after another:
// each block (all n rows, a few columns) stays in cache while every sweep
// of the batch passes over it, where a sweep applied at once streams all
// of vt through memory (at n = 2048, 32 MB a sweep, about 4,000 sweeps:
// memory bandwidth set the time, and it varied threefold on a shared
// machine). The order of the rotations is kept: per column they are
// applied exactly as one sweep after another would.
type rotations struct {
	n     int
	vt    []float64
	lm    []int     // each queued sweep's l and m
	cs    []float64 // their (c, s) pairs, sweep after sweep
	pairs int       // rotations queued, over all sweeps
}

// sweep queues a sweep over rows l..m and returns its 2·(m−l) values to
// fill: (c, s) of the rotation of rows i and i+1 at 2·(i−l).
func (q *rotations) sweep(l, m int) []float64 {
	if q.pairs+(m-l) > 64*q.n {
		q.flush()
	}
	q.lm = append(q.lm, l, m)
	at := len(q.cs)
	q.cs = append(q.cs, make([]float64, 2*(m-l))...)
	q.pairs += m - l
	return q.cs[at:]
}

// flush applies the queued sweeps, in order, each from i = m−1 down to
// l: (rowᵢ, rowᵢ₊₁) ← (c·rowᵢ − s·rowᵢ₊₁, s·rowᵢ + c·rowᵢ₊₁), on blocks of
// columns in parallel.
func (q *rotations) flush() {
	if len(q.lm) == 0 {
		return
	}
	const width = 16 // columns a block: n rows of them in cache
	n := q.n
	blocks := (n + width - 1) / width
	Parallel(blocks, func(b int) {
		lo, hi := b*width, min((b+1)*width, n)
		at := 0
		for k := 0; k < len(q.lm); k += 2 {
			l, m := q.lm[k], q.lm[k+1]
			cs := q.cs[at : at+2*(m-l)]
			at += 2 * (m - l)
			for i := m - 1; i >= l; i-- {
				c, s := cs[2*(i-l)], cs[2*(i-l)+1]
				ri := q.vt[i*n+lo : i*n+hi]
				rj := q.vt[(i+1)*n+lo : (i+1)*n+hi]
				rj = rj[:len(ri)]
				for j, x := range ri {
					y := rj[j]
					rj[j] = s*x + c*y
					ri[j] = c*x - s*y
				}
			}
		}
	})
	q.lm, q.cs, q.pairs = q.lm[:0], q.cs[:0], 0
}
