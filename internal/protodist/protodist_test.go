package protodist

import (
	"math"
	"testing"
)

// TestClassScore: minus the mean distance to a class's prototypes, so a
// class with one very near and one far prototype can rank below a class
// whose prototypes are both moderately near — the rule models scores
// with and a distilled head's teacher labels with.
func TestClassScore(t *testing.T) {
	x := []float64{0, 0}
	// Class 0: (0.1, 0) and (10, 0); class 1: (1, 0) and (0, 1).
	w := []float64{0.1, 0, 10, 0, 1, 0, 0, 1}
	for _, c := range []struct {
		j, k   int
		cosine bool
		want   float64
	}{
		{0, 2, false, -(0.1 + 10) / 2},
		{1, 2, false, -1},
		{0, 1, false, -0.1}, // k = 1: rows 0, 1, 2, 3 are classes 0…3
		{3, 1, false, -1},
		{1, 2, true, -1}, // a zero row is at cosine distance 1 from anything
	} {
		if got := ClassScore(x, 0, w, c.j, c.k, c.cosine); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("class %d of %d per class (cosine %v): %v, want %v", c.j, c.k, c.cosine, got, c.want)
		}
	}
	x = []float64{1, 0}
	if got, want := ClassScore(x, 1, w, 1, 2, true), -(0+1)/2.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("cosine, class 1: %v, want %v", got, want)
	}
}
