package solvers

import (
	"fmt"
	"math"

	"github.com/dpfeat/dpfeat/internal/bigmem"
	"github.com/dpfeat/dpfeat/preprocessing"
)

// PrepareRows reads rows into memory and prepares them (Prepare): the
// data a method that holds its rows fits from a stream of them. Rows that
// DataRows made are that data already.
func PrepareRows(rows Rows, classes int, normalize bool) (*Data, error) {
	if r, ok := rows.(dataRows); ok {
		return r.d, nil
	}
	d := rows.Dim()
	x := make([]float32, 0, rows.Len()*int64(d))
	y := make([]int32, 0, rows.Len())
	if err := rows.Each(func(bx []float32, by []int32) error {
		x, y = append(x, bx...), append(y, by...)
		return nil
	}); err != nil {
		return nil, err
	}
	return Prepare(x, y, rows.Groups(), rows.Weights(), d, classes, normalize)
}

// Prepare turns rows as stored (x holds len(y) rows of dim float32 values,
// y their labels, −1 for unlabeled) into solver data: each row is scaled to
// unit L2 norm if normalize (a per-example map that costs no privacy; the
// default, which makes every clipping norm scale-free). Rows are grouped by
// class (stable within a class), so that per-class statistics are
// contiguous blocks. groups, when not nil, is the number of consecutive
// rows of each private example (Data.Groups) and w, when not nil, their
// weights (Data.W): an example's rows stay together, ordered by the
// example's class (its first row's label), and the result's Groups and W
// follow the new order. Rows of an example of weighted rows may carry other
// labels (a soft label's second row), so only without weights are the
// labels themselves sorted.
func Prepare(x []float32, y []int32, groups []int32, w []float64, dim, classes int, normalize bool) (*Data, error) {
	rows := len(y)
	if rows == 0 {
		return nil, fmt.Errorf("no rows")
	}
	if len(x) != rows*dim {
		panic(fmt.Sprintf("solvers.Prepare: %d values for %d rows of %d", len(x), rows, dim))
	}
	if err := CheckGroups(groups, y, w); err != nil {
		return nil, err
	}
	// A stable counting sort of the examples by class (unlabeled, −1,
	// first), each example's rows together.
	bucket := func(l int32) int { return min(max(int(l)+1, 0), classes+1) }
	sizes := groups
	if sizes == nil {
		sizes = make([]int32, rows)
		for i := range sizes {
			sizes[i] = 1
		}
	}
	counts := make([]int, classes+2)
	at := 0
	for _, k := range sizes {
		counts[bucket(y[at])] += int(k)
		at += int(k)
	}
	starts := make([]int, len(counts))
	for i := 1; i < len(counts); i++ {
		starts[i] = starts[i-1] + counts[i-1]
	}
	order := make([]int, rows)
	byClass := make([][]int32, classes+2)
	at = 0
	for _, k := range sizes {
		b := bucket(y[at])
		for i := at; i < at+int(k); i++ {
			order[starts[b]] = i
			starts[b]++
		}
		if groups != nil {
			byClass[b] = append(byClass[b], k)
		}
		at += int(k)
	}
	d := &Data{X: bigmem.Float64s(rows * dim), Y: make([]int32, rows), N: rows, D: dim, M: classes}
	if w != nil {
		d.W = make([]float64, rows)
	}
	for k, i := range order {
		d.Y[k] = y[i]
		if w != nil {
			d.W[k] = w[i]
		}
		row := d.X[k*dim : (k+1)*dim]
		for j, v := range x[i*dim : (i+1)*dim] {
			row[j] = float64(v)
		}
		Preprocessing{Normalize: normalize}.Apply(row)
	}
	if groups != nil {
		d.Groups = make([]int32, 0, len(groups))
		for _, g := range byClass {
			d.Groups = append(d.Groups, g...)
		}
	}
	return d, nil
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
