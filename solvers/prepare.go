package solvers

import (
	"fmt"
	"math"
	"sort"

	"github.com/dpfeat/dpfeat/internal/bigmem"
	"github.com/dpfeat/dpfeat/preprocessing"
)

// Prepare turns rows as stored (x holds len(y) rows of dim float32 values,
// y their labels, −1 for unlabeled) into solver data: each row is scaled to
// unit L2 norm if normalize (a per-example map that costs no privacy; the
// default, which makes every clipping norm scale-free). Rows are grouped by
// class (stable within a class), so that per-class statistics are
// contiguous blocks. groups, when not nil, is the number of consecutive
// rows of each private example (Data.Groups); an example's rows share its
// label, so they stay together, and the result's Groups follow the new
// order.
func Prepare(x []float32, y []int32, groups []int32, dim, classes int, normalize bool) (*Data, error) {
	rows := len(y)
	if rows == 0 {
		return nil, fmt.Errorf("no rows")
	}
	if len(x) != rows*dim {
		panic(fmt.Sprintf("solvers.Prepare: %d values for %d rows of %d", len(x), rows, dim))
	}
	if err := CheckGroups(groups, y); err != nil {
		return nil, err
	}
	// A stable counting sort by label (unlabeled rows, −1, first).
	bucket := func(l int32) int { return min(max(int(l)+1, 0), classes+1) }
	counts := make([]int, classes+2)
	for _, l := range y {
		counts[bucket(l)]++
	}
	starts := make([]int, len(counts))
	for i := 1; i < len(counts); i++ {
		starts[i] = starts[i-1] + counts[i-1]
	}
	order := make([]int, rows)
	for i, l := range y {
		k := bucket(l)
		order[starts[k]] = i
		starts[k]++
	}
	d := &Data{X: bigmem.Float64s(rows * dim), Y: make([]int32, rows), N: rows, D: dim, M: classes}
	for k, i := range order {
		d.Y[k] = y[i]
		row := d.X[k*dim : (k+1)*dim]
		for j, v := range x[i*dim : (i+1)*dim] {
			row[j] = float64(v)
		}
		Preprocessing{Normalize: normalize}.Apply(row)
	}
	if groups != nil {
		// The same stable order, example by example.
		byClass := make([][]int32, classes+2)
		at := 0
		for _, k := range groups {
			b := bucket(y[at])
			byClass[b] = append(byClass[b], k)
			at += int(k)
		}
		d.Groups = make([]int32, 0, len(groups))
		for _, g := range byClass {
			d.Groups = append(d.Groups, g...)
		}
	}
	return d, nil
}

// classStarts returns, for labels sorted by class, the first row of each
// class and N at the end.
func classStarts(d *Data) []int {
	starts := make([]int, d.M+1)
	for c := 0; c <= d.M; c++ {
		starts[c] = sort.Search(d.N, func(i int) bool { return int(d.Y[i]) >= c })
	}
	return starts
}

// l2 is the L2 norm (preprocessing's, the one definition).
func l2(x []float64) float64 { return preprocessing.Norm(x) }

// Sigmoid is the logistic function 1/(1 + e^(−z)), computed without
// overflow; the logistic methods' loss is built on it.
func Sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}
