package solvers

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/dpfeat/dpfeat/internal/backend"
)

// TestBackendConformance checks the linear algebra the solvers use against
// naive reference loops. It runs on whichever backend the test binary was
// built with; `make test` runs it twice, pure Go and -tags openblas.
func TestBackendConformance(t *testing.T) {
	t.Logf("backend: %s", backend.Name())
	r := rand.New(rand.NewPCG(21, 1))
	const n, d, m = 173, 37, 5
	x := make([]float64, n*d)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	// syrk: XᵀX, both triangles.
	got := make([]float64, d*d)
	syrk(got, d, x, n, 0.5)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			var s float64
			for k := 0; k < n; k++ {
				s += x[k*d+i] * x[k*d+j]
			}
			if math.Abs(got[i*d+j]-0.5*s) > 1e-10*math.Max(1, math.Abs(s)) {
				t.Fatalf("syrk[%d][%d] = %v, want %v", i, j, got[i*d+j], 0.5*s)
			}
		}
	}
	// scores: U·θᵀ.
	u := &Data{X: x, Y: make([]int32, n), N: n, D: d, M: m}
	theta := make([]float64, m*d)
	for i := range theta {
		theta[i] = r.NormFloat64()
	}
	z := make([]float64, n*m)
	scores(u, theta, z)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			var s float64
			for k := 0; k < d; k++ {
				s += x[i*d+k] * theta[j*d+k]
			}
			if math.Abs(z[i*m+j]-s) > 1e-10*math.Max(1, math.Abs(s)) {
				t.Fatalf("scores[%d][%d] = %v, want %v", i, j, z[i*m+j], s)
			}
		}
	}
	// factor/solve on an SPD matrix, and the eigen path on an indefinite one.
	a := make([]float64, d*d)
	copy(a, got)
	addDiag(a, d, 1)
	b := make([]float64, d)
	for i := range b {
		b[i] = r.NormFloat64()
	}
	for _, sys := range [][]float64{a, got} {
		sol, err := solveSPD(sys, d, b)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < d; i++ {
			var s float64
			for j := 0; j < d; j++ {
				s += sys[i*d+j] * sol[j]
			}
			if math.Abs(s-b[i]) > 1e-6*math.Max(1, math.Abs(b[i])) && &sys[0] == &a[0] {
				t.Fatalf("solve: residual %v at %d", s-b[i], i)
			}
		}
	}
	// Cholesky: UᵀU = A on an SPD matrix (upper triangle), refusal on an
	// indefinite one.
	cu := append([]float64(nil), a...)
	if ok, err := backend.Cholesky(d, cu); err != nil || !ok {
		t.Fatalf("Cholesky of an SPD matrix: ok %v, %v", ok, err)
	}
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			var s float64
			for k := 0; k <= i; k++ {
				s += cu[k*d+i] * cu[k*d+j]
			}
			if math.Abs(s-a[i*d+j]) > 1e-9*math.Max(1, math.Abs(a[i*d+j])) {
				t.Fatalf("UᵀU[%d][%d] = %v, want %v", i, j, s, a[i*d+j])
			}
		}
	}
	indef := append([]float64(nil), got...)
	addDiag(indef, d, -float64(n)/2)
	if ok, err := backend.Cholesky(d, indef); err != nil || ok {
		t.Fatalf("Cholesky of an indefinite matrix: ok %v, %v; want not ok", ok, err)
	}
	// psdProject: the result is PSD and unchanged on a PSD input.
	ind := make([]float64, d*d)
	copy(ind, got)
	addDiag(ind, d, -float64(n)/2)
	if err := psdProject(ind, d); err != nil {
		t.Fatal(err)
	}
	// The float32 path for noisy releases agrees to float32 rounding of
	// the matrix's scale.
	noisy := make([]float64, d*d)
	copy(noisy, got)
	addDiag(noisy, d, -float64(n)/2)
	var scale float64
	for _, v := range noisy {
		scale = math.Max(scale, math.Abs(v))
	}
	if err := psdProjectNoisy(noisy, d); err != nil {
		t.Fatal(err)
	}
	for i := range ind {
		if math.Abs(noisy[i]-ind[i]) > 1e-5*scale {
			t.Fatalf("float32 projection differs at %d: %v vs %v (scale %v)", i, noisy[i], ind[i], scale)
		}
	}
	// The other path (negative eigenpairs only, used from negEigFrom on)
	// gives the same projection.
	viaNeg := make([]float64, d*d)
	copy(viaNeg, got)
	addDiag(viaNeg, d, -float64(n)/2)
	defer func(v int) { negEigFrom = v }(negEigFrom)
	negEigFrom = 0
	if err := psdProject(viaNeg, d); err != nil {
		t.Fatal(err)
	}
	for i := range ind {
		if math.Abs(viaNeg[i]-ind[i]) > 1e-9*math.Max(1, math.Abs(ind[i])) {
			t.Fatalf("projections from all and from the negative eigenpairs differ at %d: %v vs %v", i, ind[i], viaNeg[i])
		}
	}
	for trial := 0; trial < 20; trial++ {
		v := make([]float64, d)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		var q float64
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				q += v[i] * ind[i*d+j] * v[j]
			}
		}
		if q < -1e-8 {
			t.Fatalf("projection not PSD: vᵀAv = %v", q)
		}
	}
	psd := make([]float64, d*d)
	copy(psd, a)
	if err := psdProject(psd, d); err != nil {
		t.Fatal(err)
	}
	for i := range psd {
		if math.Abs(psd[i]-a[i]) > 1e-9*math.Max(1, math.Abs(a[i])) {
			t.Fatalf("projection changed a PSD matrix at %d: %v → %v", i, a[i], psd[i])
		}
	}
}

// BenchmarkGram times the Gram matrix XᵀX of a 20000×768 matrix as one
// float64 SYRK on all cores (BLAS threads), a reference, and reports
// GFLOP/s (n·d² multiply-adds counted as 2 flops, half of them for the
// symmetric product).
func BenchmarkGram(b *testing.B) {
	const n, d = 20000, 768
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	c := make([]float64, d*d)
	defer backend.SetThreads(runtime.GOMAXPROCS(0))()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range c {
			c[k] = 0
		}
		syrk(c, d, x, n, 1)
	}
	b.ReportMetric(float64(n)*d*d*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkGramAcc times the statistics path on the same 20000×768 matrix:
// float32 rows converted block by block and SYRKed in float64 (so that
// the summation's rounding bound is small enough to add to the
// sensitivity), rows split over the cores, as DP-FC's covariance and a
// chunked DP-LS's G are accumulated.
func BenchmarkGramAcc(b *testing.B) {
	const n, d = 20000, 768
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g := newGramAcc(d, runtime.GOMAXPROCS(0))
		for start := 0; start < n; start += 4096 {
			rows := min(4096, n-start)
			g.add(x[start*d:(start+rows)*d], rows)
		}
		g.result()
	}
	b.ReportMetric(float64(n)*d*d*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkPeakGEMM times the BLAS's own float32 GEMM on all cores (BLAS
// threads), XᵀX as a general product (2·n·d² flops), the peak the Gram is
// compared against.
func BenchmarkPeakGEMM(b *testing.B) {
	const n, d = 20000, 768
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	c := make([]float32, d*d)
	a := blas32.General{Rows: n, Cols: d, Stride: d, Data: x}
	cc := blas32.General{Rows: d, Cols: d, Stride: d, Data: c}
	defer backend.SetThreads(runtime.GOMAXPROCS(0))()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		blas32.Gemm(blas.Trans, blas.NoTrans, 1, a, a, 0, cc)
	}
	b.ReportMetric(2*float64(n)*d*d*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// syrk adds alpha·XᵀX (one BLAS SYRK) of the rows×d row-major block x to the d×d matrix c
// (both triangles are filled).
func syrk(c []float64, d int, x []float64, rows int, alpha float64) {
	if rows == 0 {
		return
	}
	a := blas64.General{Rows: rows, Cols: d, Stride: d, Data: x[:rows*d]}
	cs := blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: c}
	blas64.Syrk(blas.Trans, alpha, a, 1, cs)
	for i := 0; i < d; i++ {
		for j := i + 1; j < d; j++ {
			c[j*d+i] = c[i*d+j]
		}
	}
}
