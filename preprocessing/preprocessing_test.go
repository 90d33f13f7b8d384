package preprocessing

import (
	"fmt"
	"math"
	"testing"
)

// TestApplyOrderAndClip: normalise, pool, scale, centre, clip, in that
// order; the clip lands at C·ClipMargin, never above C.
func TestApplyOrderAndClip(t *testing.T) {
	p := Preprocessing{Normalize: true, Pool: 2, Scale: 10, Center: []float64{1, 0}, Clip: 2}
	x := p.Apply([]float64{3, 4, 0, 0}) // unit: .6 .8 0 0 → pooled .7 0 → ×10 7 0 → −c 6 0 → clip 2
	if len(x) != 2 || math.Abs(x[0]-2*ClipMargin) > 1e-15 || x[1] != 0 || Norm(x) > 2 {
		t.Errorf("%v", x)
	}
}

// ExamplePreprocessing_Apply shows DP-LP's preprocessing: unit norm, then
// norm C = 4, then its private mean subtracted.
func ExamplePreprocessing_Apply() {
	p := Preprocessing{Normalize: true, Scale: 4, Center: []float64{0.5, 0.5}}
	fmt.Println(p.Apply([]float64{3, 4}))
	// Output: [1.9 2.7]
}
