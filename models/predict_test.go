package models

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/preprocessing"
)

// TestPredictIsScores: Predict, which preprocesses blocks of rows on
// several cores, gives every row the scores Scores gives it alone, bit
// for bit (as float32), and its argmax — for a linear classifier behind a
// projecting transform and for cosine prototypes after pooling.
func TestPredictIsScores(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	vec := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		return v
	}
	vec32 := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	const rows, d = 300, 16
	m := &features.Matrix{Rows: rows, Dim: d, Data: vec32(rows * d)}
	classes := []string{"a", "b", "c", "d"}
	whiten := &preprocessing.Transform{Kind: "whiten", In: d, Dims: 12, Mean: vec(d), Projection: vec(12 * d)}
	for _, c := range []*Classifier{
		{Kind: "linear", Classes: classes, Dim: d, Weight: vec32(4 * 12), Bias: vec32(4), Prep: Preprocessing{Transform: whiten, Normalize: true}},
		{Kind: "prototypes", Classes: classes, Dim: d, PerClass: 1, Distance: "cosine", Weight: vec32(4 * 4), Prep: Preprocessing{Normalize: true, Pool: 4}},
	} {
		pred, scores := c.Predict(m)
		s := make([]float64, len(classes))
		for i := 0; i < rows; i++ {
			x := make([]float64, d)
			for j, v := range m.Row(i) {
				x[j] = float64(v)
			}
			c.Scores(x, s)
			want := make([]float32, len(s))
			for j, v := range s {
				want[j] = float32(v)
			}
			if !slices.Equal(scores[i*len(s):(i+1)*len(s)], want) || int(pred[i]) != slices.Index(want, slices.Max(want)) {
				t.Fatalf("%s row %d: Predict %v (class %d), Scores %v", c.Kind, i, scores[i*len(s):(i+1)*len(s)], pred[i], want)
			}
		}
	}
}
