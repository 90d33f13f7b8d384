package pretrain

import "math"

// Loss is the value of the contrastive loss and its parts.
type Loss struct {
	Total   float64 `json:"loss"`
	Align   float64 `json:"align"`
	Uniform float64 `json:"uniform"`
}

// AlignUniform returns Wang and Isola's loss (see the package doc) of two
// views' embeddings e1 and e2 (n rows of d values each, row i of both from
// image i; not normalised: the loss normalises them) with temperature t
// and uniformity weight lambda, and writes its gradient with respect to
// e1 and e2 to g1 and g2. Embeddings of norm 0 have no direction: their
// gradient is 0. n must be at least 2.
func AlignUniform(e1, e2 []float32, n, d int, t, lambda float64, g1, g2 []float32) Loss {
	x, nx := normalise(e1, n, d)
	y, ny := normalise(e2, n, d)
	dx, dy := make([]float64, n*d), make([]float64, n*d)
	var l Loss
	// Alignment (α = 2): (1/n)·Σ‖x_i − y_i‖², gradient ±(2/n)(x_i − y_i).
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			diff := x[i*d+k] - y[i*d+k]
			l.Align += diff * diff
			dx[i*d+k] += 2 * diff / float64(n)
			dy[i*d+k] -= 2 * diff / float64(n)
		}
	}
	l.Align /= float64(n)
	ux := uniform(x, n, d, t, lambda/2, dx)
	uy := uniform(y, n, d, t, lambda/2, dy)
	l.Uniform = (ux + uy) / 2
	l.Total = l.Align + lambda*l.Uniform
	backNormalise(x, nx, dx, n, d, g1)
	backNormalise(y, ny, dy, n, d, g2)
	return l
}

// uniform returns log((1/P)·Σ_{i<j} exp(−t‖x_i − x_j‖²)) of unit rows x
// and adds scale times its gradient to dx. The sum is taken relative to
// its largest term, so it neither overflows nor underflows.
func uniform(x []float64, n, d int, t, scale float64, dx []float64) float64 {
	p := n * (n - 1) / 2
	e := make([]float64, 0, p) // −t‖x_i − x_j‖², i < j, in order
	top := math.Inf(-1)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			var sq float64
			for k := 0; k < d; k++ {
				diff := x[i*d+k] - x[j*d+k]
				sq += diff * diff
			}
			e = append(e, -t*sq)
			top = math.Max(top, -t*sq)
		}
	}
	var sum float64
	for _, v := range e {
		sum += math.Exp(v - top)
	}
	// ∂/∂x_i = Σ_{j≠i} w_ij·(−2t)(x_i − x_j), w_ij = exp(e_ij)/Σ exp(e).
	at := 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			w := math.Exp(e[at]-top) / sum
			at++
			for k := 0; k < d; k++ {
				g := scale * w * -2 * t * (x[i*d+k] - x[j*d+k])
				dx[i*d+k] += g
				dx[j*d+k] -= g
			}
		}
	}
	return top + math.Log(sum) - math.Log(float64(p))
}

// normalise returns the rows of e scaled to unit norm (float64) and their
// norms.
func normalise(e []float32, n, d int) ([]float64, []float64) {
	x, norms := make([]float64, n*d), make([]float64, n)
	for i := 0; i < n; i++ {
		var sq float64
		for _, v := range e[i*d : (i+1)*d] {
			sq += float64(v) * float64(v)
		}
		norms[i] = math.Sqrt(sq)
		if norms[i] == 0 {
			continue
		}
		for k, v := range e[i*d : (i+1)*d] {
			x[i*d+k] = float64(v) / norms[i]
		}
	}
	return x, norms
}

// backNormalise writes the gradient with respect to the unnormalised rows:
// ∂L/∂e = (∂L/∂x − (∂L/∂x·x)·x)/‖e‖.
func backNormalise(x, norms, dx []float64, n, d int, g []float32) {
	for i := 0; i < n; i++ {
		if norms[i] == 0 {
			clear(g[i*d : (i+1)*d])
			continue
		}
		var dot float64
		for k := 0; k < d; k++ {
			dot += dx[i*d+k] * x[i*d+k]
		}
		for k := 0; k < d; k++ {
			g[i*d+k] = float32((dx[i*d+k] - dot*x[i*d+k]) / norms[i])
		}
	}
}
