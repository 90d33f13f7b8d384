// Package protodist is the distance a prototype classifier scores with,
// written once: models' Scores ranks classes by it, and DPPL-Mean's
// refinement (package prototypes) assigns public rows by it, so the two
// agree on which prototype is nearest. (models and prototypes may not
// import each other: layers_test.go.)
package protodist

import "math"

// Distance is the distance between a preprocessed row x (of norm xn) and
// a prototype w: 1 − cos(x, w), 1 when either is zero, or with cosine
// false the euclidean ‖x − w‖.
func Distance[W float32 | float64](x []float64, xn float64, w []W, cosine bool) float64 {
	if cosine {
		var dot, wn float64
		for i, v := range w {
			dot += float64(v) * x[i]
			wn += float64(v) * float64(v)
		}
		if xn > 0 && wn > 0 {
			return 1 - dot/(xn*math.Sqrt(wn))
		}
		return 1
	}
	var s float64
	for i, v := range w {
		e := float64(v) - x[i]
		s += e * e
	}
	return math.Sqrt(s)
}
