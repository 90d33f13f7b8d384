package audit

import (
	"math"
	"math/rand/v2"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/solvers"
)

// The audit's data: D, its neighbour D′ with a canary, and the canaries of
// DP-LP and the exponential mechanisms.

// lpCanary is DP-LP's canary: the unit vector (e₀ − û)/√2, with û the unit
// direction of D's mean. Centred, it keeps the canary's e₀ and adds D's
// mean to −û, so that ‖x̃‖ is well above C and its gradient stays clipped —
// at the whole sensitivity C_g — at every step (the centred e₀ would give
// ‖p − e₀‖·‖x̃‖ ≈ 0.8·1.2 ≈ 0.96 C_g with three classes at W = 0, less
// as W learns it).
func lpCanary(D *solvers.Data) []float64 {
	u := make([]float64, D.D)
	for i := 0; i < D.N; i++ {
		for k, v := range D.Row(i) {
			u[k] += v
		}
	}
	var nrm float64
	for _, v := range u {
		nrm += v * v
	}
	x := make([]float64, D.D)
	for k, v := range u {
		x[k] = -v / math.Sqrt(nrm) / math.Sqrt2
	}
	x[0] += 1 / math.Sqrt2
	return x
}

// dataset returns D (rows zero in coordinate 0, labels balanced; with rare,
// for Poisson sampling, one row of class 0 and the others balanced) and D′
// (D plus the canary e₀ with label 0), unit-normalised as Prepare would.
func dataset(n, d, m int, rare bool) (*solvers.Data, *solvers.Data) {
	r := rand.New(rand.NewPCG(11, 13))
	x := make([]float64, n*d)
	y := make([]int32, n)
	for i := 0; i < n; i++ {
		y[i] = int32(i * m / n)
		if rare { // one row of class 0, the rest balanced over the others
			y[i] = 0
			if i > 0 {
				y[i] = int32(1 + (i-1)*(m-1)/(n-1))
			}
		}
		row := x[i*d : (i+1)*d]
		var s float64
		for k := 1; k < d; k++ {
			row[k] = r.NormFloat64() + float64((int(y[i])+k)%m)
			s += row[k] * row[k]
		}
		for k := 1; k < d; k++ {
			row[k] /= math.Sqrt(s)
		}
	}
	D := &solvers.Data{X: x, Y: y, N: n, D: d, M: m}
	// The canary goes first: rows stay grouped by class (Prepare's order).
	x2 := append(append(make([]float64, 0, (n+1)*d), 1), make([]float64, d-1)...)
	x2 = append(x2, x...)
	y2 := append([]int32{0}, y...)
	return D, &solvers.Data{X: x2, Y: y2, N: n + 1, D: d, M: m}
}

// withViews returns d with its first row (the canary, in D′) as an
// example of k identical rows and mixes mixups with public images, and
// every other row an example of one: the views of an image that
// augmentation left as it was, and their mixes. A mixup here mixes the
// canary with itself and its soft label splits the canary's class, λ and
// 1 − λ: two rows of weights λ and 1 − λ (solvers.Data.W), λ = j/(mixes+1)
// for the j-th. Averaged, as a correct method does, they are the canary's
// one row, so every shift the audit computes for it holds; taken for
// k + 2·mixes examples they move each release that many times as far.
func withViews(d *solvers.Data, k, mixes int) *solvers.Data {
	out := &solvers.Data{D: d.D, M: d.M, N: d.N + k - 1 + 2*mixes}
	for v := 0; v < k; v++ {
		out.X = append(out.X, d.Row(0)...)
		out.Y = append(out.Y, d.Y[0])
	}
	if mixes > 0 {
		out.W = make([]float64, k, out.N)
		for v := range out.W {
			out.W[v] = 1
		}
		for j := 1; j <= mixes; j++ {
			lambda := float64(j) / float64(mixes+1)
			out.X = append(append(out.X, d.Row(0)...), d.Row(0)...)
			out.Y, out.W = append(out.Y, d.Y[0], d.Y[0]), append(out.W, lambda, 1-lambda)
		}
		for range d.N - 1 {
			out.W = append(out.W, 1)
		}
	}
	out.X, out.Y = append(out.X, d.X[d.D:]...), append(out.Y, d.Y[1:]...)
	out.Groups = make([]int32, d.N)
	for i := range out.Groups {
		out.Groups[i] = 1
	}
	out.Groups[0] = int32(k + 2*mixes)
	return out
}

// setting is a method's hyperparameter as the audit was given it, else
// the method's declared default (solvers.Setting): one source, so that a
// changed default changes the audit's canaries with it. A name the method
// lacks, or whose default is derived from the data, reads as 1.
func setting(method, name string, params map[string]float64) float64 {
	if v, ok := solvers.Setting(method, name, params); ok {
		return v
	}
	return 1
}

// exponentialCanary builds the public set the exponential-mechanism
// prototypes choose class 0's K prototypes from: K − 1 anchors (class 0's
// mean direction in D, whose utility is far above every other point's on D
// and D′ alike), the canary's direction e₀, and decoys −e₀. On D, which is
// zero along e₀, e₀ and the decoys score alike; the canary raises e₀'s
// utility by the whole range Δu, the anchors' by Δu/2 and the decoys' by
// nothing. Every K-set but S* = anchors ∪ {e₀} holds a decoy, so the sets'
// utility u_min is the same for all on D, and on D′ is Δu higher for S*
// alone: S* has probability 1/W on D and e^ε/(e^ε + W − 1) on D′, with W
// the number of K-sets. W is taken as the first C(N, K) ≥ e^ε (20 to
// 500, so that S* stays frequent enough to count), which lets the test's
// log-ratio approach ε − log 2.
func exponentialCanary(D *solvers.Data, eps float64, K int) *solvers.Data {
	K = max(K, 1)
	want := math.Min(500, math.Max(20, math.Exp(eps)))
	N := K + 1
	for accounting.LogBinom(float64(N), float64(K)) < math.Log(want) {
		N++
	}
	d := D.D
	pub := &solvers.Data{X: make([]float64, N*d), Y: make([]int32, N), N: N, D: d, M: D.M}
	anchor := make([]float64, d)
	for i := 0; i < D.N; i++ {
		if D.Y[i] == 0 {
			for k, v := range D.Row(i) {
				anchor[k] += v
			}
		}
	}
	var nrm float64
	for _, v := range anchor {
		nrm += v * v
	}
	for i := 0; i < N; i++ {
		pub.Y[i] = -1
		row := pub.X[i*d : (i+1)*d]
		switch {
		case i < K-1:
			for k, v := range anchor {
				row[k] = v / math.Sqrt(nrm)
			}
		case i == K-1:
			row[0] = 1
		default:
			row[0] = -1
		}
	}
	return pub
}
