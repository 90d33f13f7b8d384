package models

import (
	"math"
	"sort"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/backend"
)

// Predict scores every row of m: the predicted class of each row, and the
// M scores of each (row-major). Rows go in blocks, preprocessed together
// (Preprocessing.ApplyRows, bit for bit what Scores does to one row: a
// transform's projection is read once per block, not once per row), the
// blocks spread over the cores.
func (c *Classifier) Predict(m *features.Matrix) (pred []int32, scores []float32) {
	k, d := len(c.Classes), m.Dim
	dp := c.Prep.PooledDim(d)
	pred = make([]int32, m.Rows)
	scores = make([]float32, m.Rows*k)
	const block = 64
	backend.Parallel((m.Rows+block-1)/block, func(b int) {
		lo, hi := b*block, min((b+1)*block, m.Rows)
		x := make([]float64, (hi-lo)*d)
		for j, v := range m.Data[lo*d : hi*d] {
			x[j] = float64(v)
		}
		pre := make([]float64, (hi-lo)*dp)
		c.Prep.ApplyRows(x, hi-lo, d, pre)
		s := make([]float64, k)
		for i := lo; i < hi; i++ {
			c.score(pre[(i-lo)*dp:(i-lo+1)*dp], s)
			best := 0
			for j, v := range s {
				scores[i*k+j] = float32(v)
				if v > s[best] {
					best = j
				}
			}
			pred[i] = int32(best)
		}
	})
	return pred, scores
}

// ClassAccuracy is one class's share of correctly classified test rows.
type ClassAccuracy struct {
	Class    string  `json:"class"`
	Rows     int64   `json:"rows"`
	Accuracy float64 `json:"accuracy"`
	Minority bool    `json:"minority"`
}

// Metrics are a classifier's accuracies on a labelled feature matrix.
type Metrics struct {
	Accuracy         float64 `json:"accuracy"`
	BalancedAccuracy float64 `json:"balanced_accuracy"`
	// MinorityAccuracy is the accuracy over the test rows of the minority
	// classes (nil when no training counts name them).
	MinorityAccuracy *float64        `json:"minority_accuracy"`
	PerClass         []ClassAccuracy `json:"per_class"`
	Rows             int64           `json:"rows"`
	Unlabeled        int64           `json:"unlabeled_rows_skipped"`
}

// MinorityClasses are the ceil(25%) of the k classes with the fewest
// training rows (ties broken by class index); none without counts.
func MinorityClasses(trainCounts []int64, k int) map[int]bool {
	out := map[int]bool{}
	if len(trainCounts) != k {
		return out
	}
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return trainCounts[idx[a]] < trainCounts[idx[b]] })
	for _, i := range idx[:int(math.Ceil(0.25*float64(k)))] {
		out[i] = true
	}
	return out
}

// Evaluate computes accuracy, balanced accuracy (the mean over classes
// present in m), minority-class accuracy (classes named by trainCounts,
// see MinorityClasses) and per-class accuracy. Unlabeled rows are
// skipped; Rows is 0 when none is labelled.
func (c *Classifier) Evaluate(m *features.Matrix, trainCounts []int64) Metrics {
	k := len(c.Classes)
	pred, _ := c.Predict(m)
	rows := make([]int64, k)
	right := make([]int64, k)
	var met Metrics
	for i, y := range m.Labels {
		if y < 0 {
			met.Unlabeled++
			continue
		}
		rows[y]++
		if pred[i] == y {
			right[y]++
		}
	}
	minority := MinorityClasses(trainCounts, k)
	var total, correct, minRows, minRight int64
	var balSum float64
	present := 0
	for j := 0; j < k; j++ {
		ca := ClassAccuracy{Class: c.Classes[j], Rows: rows[j], Minority: minority[j]}
		if rows[j] > 0 {
			ca.Accuracy = float64(right[j]) / float64(rows[j])
			balSum += ca.Accuracy
			present++
		}
		total += rows[j]
		correct += right[j]
		if minority[j] {
			minRows += rows[j]
			minRight += right[j]
		}
		met.PerClass = append(met.PerClass, ca)
	}
	met.Rows = total
	if total == 0 {
		return met
	}
	met.Accuracy = float64(correct) / float64(total)
	met.BalancedAccuracy = balSum / float64(present)
	if minRows > 0 {
		v := float64(minRight) / float64(minRows)
		met.MinorityAccuracy = &v
	}
	return met
}
