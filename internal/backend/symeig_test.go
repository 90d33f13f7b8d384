package backend

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// symEigCases are symmetric matrices an eigensolver gets wrong first:
// repeated and zero eigenvalues (a Gram matrix of fewer rows than
// columns), a diagonal one, graded scales, and a noisy release's
// indefinite one.
func symEigCases() []struct {
	name string
	n    int
	a    []float64
} {
	r := rand.New(rand.NewPCG(1, 2))
	gram := func(n, rows int, scale func(j int) float64) []float64 {
		x := make([]float64, rows*n)
		for i := range x {
			x[i] = r.NormFloat64() * scale(i%n)
		}
		a := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for k := 0; k < rows; k++ {
					s += x[k*n+i] * x[k*n+j]
				}
				a[i*n+j] = s
			}
		}
		return a
	}
	one := func(int) float64 { return 1 }
	sym := func(n int) []float64 {
		a := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				v := r.NormFloat64()
				a[i*n+j], a[j*n+i] = v, v
			}
		}
		return a
	}
	diag := func(n int, v func(i int) float64) []float64 {
		a := make([]float64, n*n)
		for i := 0; i < n; i++ {
			a[i*n+i] = v(i)
		}
		return a
	}
	return []struct {
		name string
		n    int
		a    []float64
	}{
		{"1×1", 1, []float64{-3}},
		{"2×2", 2, []float64{2, 1, 1, 2}},
		{"zero", 5, make([]float64, 25)},
		{"identity", 40, diag(40, func(int) float64 { return 1 })},
		{"diagonal unsorted", 30, diag(30, func(i int) float64 { return float64((i * 7) % 30) })},
		{"repeated", 60, diag(60, func(i int) float64 { return float64(i % 3) })},
		{"indefinite", 97, sym(97)},
		{"rank 10 of 150", 150, gram(150, 10, one)},
		{"graded 1e-12 to 1", 120, gram(120, 400, func(j int) float64 { return math.Pow(10, -6*float64(j)/119) })},
		{"full 300", 300, gram(300, 1000, one)},
	}
}

// TestSymEigConformance checks the backend's SymEig (whichever this build
// has) and the pure-Go one against gonum's mat.EigenSym: the same
// eigenvalues, orthonormal eigenvector rows, and A·v = λ·v.
func TestSymEigConformance(t *testing.T) {
	for _, tc := range symEigCases() {
		var ref mat.EigenSym
		if !ref.Factorize(mat.NewSymDense(tc.n, append([]float64(nil), tc.a...)), false) {
			t.Fatalf("%s: the reference did not converge", tc.name)
		}
		want := ref.Values(nil)
		norm := 0.0
		for _, v := range want {
			norm = math.Max(norm, math.Abs(v))
		}
		tol := 1e-12 * float64(tc.n) * math.Max(norm, 1)
		for _, impl := range []struct {
			name string
			fn   func(n int, a, w []float64) error
		}{{"SymEig", SymEig}, {"symEigGo", symEigGo}} {
			t.Run(fmt.Sprintf("%s/%s", tc.name, impl.name), func(t *testing.T) {
				n := tc.n
				v := append([]float64(nil), tc.a...)
				w := make([]float64, n)
				if err := impl.fn(n, v, w); err != nil {
					t.Fatal(err)
				}
				for i := range w {
					if math.Abs(w[i]-want[i]) > tol {
						t.Fatalf("eigenvalue %d: %g, want %g", i, w[i], want[i])
					}
					if i > 0 && w[i] < w[i-1] {
						t.Fatalf("eigenvalues not ascending at %d: %g after %g", i, w[i], w[i-1])
					}
				}
				for i := 0; i < n; i++ {
					vi := v[i*n : (i+1)*n]
					for j := i; j < n; j++ {
						var dot float64
						for k, x := range vi {
							dot += x * v[j*n+k]
						}
						if want := b2f(i == j); math.Abs(dot-want) > 1e-10*float64(n) {
							t.Fatalf("rows %d and %d: dot %g, want %g", i, j, dot, want)
						}
					}
					for r := 0; r < n; r++ {
						var av float64
						for k := 0; k < n; k++ {
							av += tc.a[r*n+k] * vi[k]
						}
						if math.Abs(av-w[i]*vi[r]) > tol {
							t.Fatalf("(A·v%d)[%d] = %g, λ·v = %g", i, r, av, w[i]*vi[r])
						}
					}
				}
			})
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// BenchmarkSymEig times the eigendecomposition of a noisy second-moment
// matrix, as auto's whitening makes one (D = 256 to 2048): this build's
// SymEig (LAPACKE dsyevd under -tags openblas), the pure-Go symEigGo, and
// gonum's mat.EigenSym, which the pure-Go build used before. About
// 4n³/3 flops reduce to tridiagonal form, 4n³/3 form Q, and about 6n³
// accumulate the rotations in symEigGo and mat.EigenSym (dsyevd's
// divide and conquer does fewer).
func BenchmarkSymEig(b *testing.B) {
	for _, n := range []int{256, 768, 2048} {
		r := rand.New(rand.NewPCG(3, 4))
		a := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				v := r.NormFloat64() / float64(n)
				if i == j {
					v += 1 / float64(1+i)
				}
				a[i*n+j], a[j*n+i] = v, v
			}
		}
		for _, impl := range []struct {
			name string
			fn   func(n int, a, w []float64) error
		}{{"backend", SymEig}, {"go", symEigGo}, {"gonum-EigenSym", func(n int, a, w []float64) error {
			var e mat.EigenSym
			if !e.Factorize(mat.NewSymDense(n, a), true) {
				return fmt.Errorf("no convergence")
			}
			e.Values(w)
			return nil
		}}} {
			if impl.name == "gonum-EigenSym" && n > 768 && testing.Short() {
				continue
			}
			b.Run(fmt.Sprintf("%s/n=%d", impl.name, n), func(b *testing.B) {
				v := make([]float64, n*n)
				w := make([]float64, n)
				for b.Loop() {
					copy(v, a)
					if err := impl.fn(n, v, w); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(26*math.Pow(float64(n), 3)/3/b.Elapsed().Seconds()*float64(b.N)/1e9, "GFLOP/s(8.7n³)")
			})
		}
	}
}
