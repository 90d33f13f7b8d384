// Package protodist is the distance a prototype classifier scores with,
// and its class score, written once: models' Scores ranks classes by
// ClassScore, a distilled head's teacher (package solvers) labels the
// public rows by it, and DPPL-Mean's refinement (package prototypes)
// assigns public rows by Distance, so all agree on which class is
// nearest. (models, prototypes and solvers may not import each other
// that way: layers_test.go.)
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

// ClassScore is the score a prototype classifier gives class j: minus the
// mean Distance of x (of norm xn) to the class's k prototypes, rows
// j·k … j·k+k−1 of w (len(x) values each). The class ranked first is the
// one whose prototypes are nearest on average, not the one holding the
// single nearest prototype.
func ClassScore[W float32 | float64](x []float64, xn float64, w []W, j, k int, cosine bool) float64 {
	d := len(x)
	var total float64
	for p := range k {
		total += Distance(x, xn, w[(j*k+p)*d:(j*k+p+1)*d], cosine)
	}
	return -total / float64(k)
}
