// Package benchutil holds what the benchmark programs share: turning a
// solver result into a classifier and summarising repeated runs.
package benchutil

import (
	"sort"

	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/solvers"
)

// Classifier wraps a solver result as the classifier `dpfeat fit` would
// write, so benchmarks score exactly as `dpfeat eval` does.
func Classifier(r *solvers.Result, classes []string, dim int) *models.Classifier {
	c := &models.Classifier{Kind: "linear", Classes: classes, Dim: dim, Prep: models.Preprocessing{Normalize: r.Prep.Normalize, Pool: r.Prep.Pool, Clip: r.Prep.Clip}}
	if r.Prototypes != nil {
		c.Kind, c.Weight, c.PerClass, c.Distance = "prototypes", F32(r.Prototypes), r.PerClass, r.Distance
	} else {
		c.Weight, c.Bias = F32(r.W), F32(r.B)
	}
	return c
}

// F32 converts to float32.
func F32(x []float64) []float32 {
	o := make([]float32, len(x))
	for i, v := range x {
		o[i] = float32(v)
	}
	return o
}

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

// Median of x.
func Median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
