package solvers

import (
	"fmt"
	"math"
	"sort"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	// The BLAS backend: pure Go, or OpenBLAS with -tags openblas.
	"github.com/dpfeat/dpfeat/internal/backend"
	"github.com/dpfeat/dpfeat/internal/bigmem"
)

// symAdd adds b (scaled) to a, both d×d.
func symAdd(a []float64, s float64, b []float64) {
	for i, v := range b {
		a[i] += s * v
	}
}

func addDiag(a []float64, d int, v float64) {
	for i := 0; i < d; i++ {
		a[i*d+i] += v
	}
}

// negEigFrom is the dimension from which psdProject asks LAPACK for the
// negative eigenpairs only (dsyevr): below it the full divide-and-conquer
// decomposition (dsyevd) is faster; at D = 1664 dsyevr takes 0.45–0.70 s
// against dsyevd's 0.73, the less the more eigenvalues are negative (2
// cores, OpenBLAS 0.3.21).
var negEigFrom = 1024

// psdProject replaces the symmetric d×d matrix a by its projection on the
// positive semidefinite cone: negative eigenvalues are set to 0. The DP-LS
// authors' code does this to noisy Gram matrices before solving. With the
// eigenpairs (λₖ, vₖ), the projection is Σ_{λₖ>0} λₖ vₖvₖᵀ = WᵀW for the
// rows wₖ = √λₖ·vₖ, one SYRK; or, from the negative pairs alone,
// a − Σ_{λₖ<0} λₖ vₖvₖᵀ = a + WᵀW for wₖ = √(−λₖ)·vₖ.
func psdProject(a []float64, d int) error {
	v := bigmem.Float64s(len(a))
	w := make([]float64, d)
	var k int // rows of v to use
	if d >= negEigFrom {
		tmp := bigmem.Float64s(len(a))
		copy(tmp, a)
		var err error
		if k, err = backend.NegEig(d, tmp, w, v); err != nil {
			return err
		}
		for j := 0; j < k; j++ {
			w[j] = -w[j]
		}
	} else {
		copy(v, a)
		if err := backend.SymEig(d, v, w); err != nil {
			return err
		}
		if w[0] >= 0 {
			return nil // already PSD (eigenvalues ascend)
		}
		first := sort.SearchFloat64s(w, math.SmallestNonzeroFloat64) // the first λ > 0
		v, w, k = v[first*d:], w[first:], d-first
		clear(a)
	}
	if k == 0 {
		return nil
	}
	for j := 0; j < k; j++ {
		s := math.Sqrt(w[j])
		row := v[j*d : (j+1)*d]
		for i := range row {
			row[i] *= s
		}
	}
	vs := blas64.General{Rows: k, Cols: d, Stride: d, Data: v[:k*d]}
	cs := blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: a}
	blas64.Syrk(blas.Trans, 1, vs, 1, cs)
	backend.MirrorUpper(a, d)
	return nil
}

// symEig returns the eigenvalues of the symmetric d×d row-major matrix a
// (ascending) and its eigenvectors as the rows of vecs (eigenvector k is
// vecs[k·d : (k+1)·d]); a is not changed. It goes through the backend:
// LAPACKE's divide-and-conquer dsyevd under -tags openblas (1.4 s for
// D = 2048), the pure-Go backend's own solver otherwise (16–19 s), where
// gonum's mat.EigenSym, called here in both builds before, took 113 s
// (bench/results/largedim.md).
func symEig(a []float64, d int) (vals, vecs []float64, err error) {
	vecs = make([]float64, d*d)
	copy(vecs, a[:d*d])
	vals = make([]float64, d)
	if err := backend.SymEig(d, vecs, vals); err != nil {
		return nil, nil, err
	}
	return vals, vecs, nil
}

// psdProjectNoisy is psdProject for a matrix that carries its own Gaussian
// noise (a private release): below negEigFrom the eigendecomposition runs
// in float32, about twice as fast, its rounding (~1e-7 of ‖a‖) far below
// the noise, and the projection is rebuilt from it in float32; the result
// is PSD up to that rounding, and what it is added to (λI, at least the
// noise's spectral norm) keeps every solve well conditioned. Post-
// processing of a release: no effect on the guarantee.
func psdProjectNoisy(a []float64, d int) error {
	if d >= negEigFrom {
		return psdProject(a, d)
	}
	v := bigmem.Float32s(d * d)
	for i, x := range a[:d*d] {
		v[i] = float32(x)
	}
	w := make([]float32, d)
	if err := backend.SymEig32(d, v, w); err != nil {
		return err
	}
	if w[0] >= 0 {
		return nil
	}
	first := sort.Search(d, func(i int) bool { return w[i] > 0 })
	k := d - first
	rows := v[first*d:]
	for j := 0; j < k; j++ {
		s := float32(math.Sqrt(float64(w[first+j])))
		row := rows[j*d : (j+1)*d]
		for i := range row {
			row[i] *= s
		}
	}
	out := bigmem.Float32s(d * d)
	if k > 0 {
		vs := blas32.General{Rows: k, Cols: d, Stride: d, Data: rows[:k*d]}
		cs := blas32.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: out}
		blas32.Syrk(blas.Trans, 1, vs, 0, cs)
	}
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			a[i*d+j] = float64(out[i*d+j])
		}
	}
	backend.MirrorUpper(a, d)
	return nil
}

// spdSolver solves a·x = b for a symmetric d×d matrix: by Cholesky when a
// is positive definite and well conditioned, else by an eigendecomposition
// that treats eigenvalues below a tolerance as that tolerance (a
// documented, bounded regularisation, never a NaN).
type spdSolver struct {
	d    int
	u    []float64 // the Cholesky factor: a = UᵀU, U upper (row-major)
	vals []float64 // ascending
	vecs []float64 // eigenvector k is vecs[k·d : (k+1)·d]
}

// maxCond is the condition number (1-norm estimate) above which factor
// leaves Cholesky for the eigendecomposition.
const maxCond = 1e14

func factor(a []float64, d int) (*spdSolver, error) {
	return factorInto(a, d, bigmem.Float64s(d*d))
}

// factorInto is factor with the factor's d×d memory given.
func factorInto(a []float64, d int, u []float64) (*spdSolver, error) {
	s, err := choleskyInto(a, d, u)
	if err != nil || s != nil {
		return s, err
	}
	return eigenSolver(a, d)
}

// eigenSolver is factor's fallback for a system Cholesky refused.
func eigenSolver(a []float64, d int) (*spdSolver, error) {
	s := &spdSolver{d: d}
	var err error
	if s.vals, s.vecs, err = symEig(a, d); err != nil {
		return nil, fmt.Errorf("the %d×%d system could not be factorised: %w", d, d, err)
	}
	top := 0.0
	for _, v := range s.vals {
		top = math.Max(top, math.Abs(v))
	}
	if top == 0 {
		return nil, fmt.Errorf("the %d×%d system is zero; raise lambda", d, d)
	}
	floor := top * 1e-10
	for i, v := range s.vals {
		if v < floor {
			s.vals[i] = floor
		}
	}
	return s, nil
}

// choleskyInto factors a into u by Cholesky; nil (and no error) when a is
// not positive definite or its condition exceeds maxCond.
func choleskyInto(a []float64, d int, u []float64) (*spdSolver, error) {
	copy(u, a[:d*d])
	ok, err := backend.Cholesky(d, u)
	if err != nil || !ok {
		return nil, err
	}
	// LAPACK's estimate from the factor (dpocon: O(d²), where gonum's
	// mat.Cholesky estimate cost 3× the factorisation itself at
	// d = 512); an overestimate, so the eigen fallback takes over a
	// little early, never late.
	rcond, err := backend.CholeskyRcond(d, u, oneNorm(a, d))
	if err != nil || rcond <= 1/maxCond {
		return nil, err
	}
	return &spdSolver{d: d, u: u}, nil
}

// oneNorm is the 1-norm of the symmetric d×d matrix a (its largest
// absolute row sum, from the upper triangle).
func oneNorm(a []float64, d int) float64 {
	sums := make([]float64, d)
	for i := 0; i < d; i++ {
		row := a[i*d : (i+1)*d]
		sums[i] += math.Abs(row[i])
		for j := i + 1; j < d; j++ {
			v := math.Abs(row[j])
			sums[i] += v
			sums[j] += v
		}
	}
	var m float64
	for _, v := range sums {
		m = math.Max(m, v)
	}
	return m
}

// solve returns a⁻¹·b.
func (s *spdSolver) solve(b []float64) ([]float64, error) {
	if s.u != nil {
		// UᵀU x = b: Uᵀy = b, then U x = y (two triangular solves).
		x := append([]float64(nil), b[:s.d]...)
		u := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: s.d, Stride: s.d, Data: s.u}
		v := blas64.Vector{N: s.d, Inc: 1, Data: x}
		blas64.Trsv(blas.Trans, u, v)
		blas64.Trsv(blas.NoTrans, u, v)
		return x, nil
	}
	// x = V diag(1/λ) Vᵀ b, V's columns the eigenvectors (vecs' rows)
	d := s.d
	out := make([]float64, d)
	for k := 0; k < d; k++ {
		vk := s.vecs[k*d : (k+1)*d]
		var dot float64
		for i, v := range vk {
			dot += v * b[i]
		}
		dot /= s.vals[k]
		for i, v := range vk {
			out[i] += v * dot
		}
	}
	return out, nil
}

// solveSPD solves a·x = b once: by Cholesky, else (not positive definite
// or ill-conditioned) through factor's eigendecomposition.
func solveSPD(a []float64, d int, b []float64) ([]float64, error) {
	x, ok, err := solveCholesky(a, d, b)
	if err != nil || ok {
		return x, err
	}
	s, err := eigenSolver(a, d) // Cholesky just refused it: not again
	if err != nil {
		return nil, err
	}
	return s.solve(b)
}

// solveCholesky solves a·x = b once by Cholesky; ok is false when a is not
// positive definite or ill-conditioned (maxCond). The factor's memory is
// reused from earlier solves of the same size (a fresh 2 MiB buffer per
// class cost ~500 page faults each in DP-LS).
func solveCholesky(a []float64, d int, b []float64) (x []float64, ok bool, err error) {
	u, _ := factorBufs.Get().([]float64)
	if cap(u) < d*d {
		u = bigmem.Float64s(d * d)
	}
	defer factorBufs.Put(u[:d*d])
	s, err := choleskyInto(a, d, u[:d*d])
	if err != nil || s == nil {
		return nil, false, err
	}
	x, err = s.solve(b)
	return x, err == nil, err
}

var factorBufs sync.Pool

// floatsAdd adds x to dst.
func floatsAdd(dst, x []float64) {
	for i, v := range x {
		dst[i] += v
	}
}
