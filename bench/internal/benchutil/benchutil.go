// Package benchutil holds what the benchmark programs share: scoring a
// classifier (train.Fit builds it, as for `dpfeat fit`) and summarising
// repeated runs.
package benchutil

import (
	"sort"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

// Predict returns the predicted class of each row of a feature matrix.
func Predict(c *models.Classifier, rows int, row func(i int) []float32) []int32 {
	k := len(c.Classes)
	out := make([]int32, rows)
	s := make([]float64, k)
	var x []float64
	for i := 0; i < rows; i++ {
		r := row(i)
		x = x[:0]
		for _, v := range r {
			x = append(x, float64(v))
		}
		c.Scores(x, s)
		best := 0
		for j := range s {
			if s[j] > s[best] {
				best = j
			}
		}
		out[i] = int32(best)
	}
	return out
}

// Accuracy is the fraction of a labelled feature matrix's rows that the
// classifier predicts right.
func Accuracy(c *models.Classifier, m *features.Matrix) float64 {
	ok := 0
	for i, p := range Predict(c, m.Rows, m.Row) {
		if p == m.Labels[i] {
			ok++
		}
	}
	return float64(ok) / float64(m.Rows)
}

// Median of x.
func Median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
