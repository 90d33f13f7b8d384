package solvers

import (
	"math"

	"github.com/dpfeat/dpfeat/internal/bigmem"
)

// clipRows clips every row of d to L2 norm c, in a copy.
func clipRows(d *Data, c float64) *Data {
	out := &Data{X: bigmem.Float64s(len(d.X)), Y: d.Y, N: d.N, D: d.D, M: d.M, Groups: d.Groups, W: d.W}
	copy(out.X, d.X)
	for i := 0; i < d.N; i++ {
		Preprocessing{Clip: c}.Apply(out.Row(i))
	}
	return out
}

// BiasFeatures is the feature map of the logistic methods (DP-FC, DP-SGD,
// DP-Newton and their references): u = [clip_C(x̂), C]/√2, x̂ the row
// scaled to unit norm if normalize, clipped to C·preprocessing.ClipMargin.
// A constant coordinate carries the bias, and ‖u‖ ≤ C however u is
// rounded, so every sensitivity is stated in terms of C alone. The audit
// builds its canaries with it.
func BiasFeatures(x []float64, c float64, normalize bool) []float64 {
	u := make([]float64, len(x)+1)
	fillU(x, u, c, normalize)
	return u
}

// withBias returns the rows of d under BiasFeatures (d is prepared:
// normalised already).
func withBias(d *Data, c float64) *Data {
	dd := d.D + 1
	out := &Data{X: bigmem.Float64s(d.N * dd), Y: d.Y, N: d.N, D: dd, M: d.M, Groups: d.Groups, W: d.W}
	for i := 0; i < d.N; i++ {
		fillU(d.Row(i), out.X[i*dd:(i+1)*dd], c, false)
	}
	return out
}

// startTheta returns θ (M×dd, over withBias features of dd = D+1 columns
// built with clip c) that scores every class with the given bias alone:
// the bias feature is c/√2, so its weight is bias·√2/c.
func startTheta(m, dd int, bias, c float64) []float64 {
	theta := make([]float64, m*dd)
	for j := 0; j < m; j++ {
		theta[j*dd+dd-1] = bias * math.Sqrt2 / c
	}
	return theta
}

// fromBias converts θ (M×(D+1), over withBias features) to the weights and
// biases over clipped features: score = θ[:D]·x/√2 + θ[D]·C/√2.
func fromBias(theta []float64, m, d int, c float64) (w, b []float64) {
	s := 1 / math.Sqrt2
	w = make([]float64, m*d)
	b = make([]float64, m)
	for j := 0; j < m; j++ {
		for k := 0; k < d; k++ {
			w[j*d+k] = theta[j*(d+1)+k] * s
		}
		b[j] = theta[j*(d+1)+d] * c * s
	}
	return w, b
}
