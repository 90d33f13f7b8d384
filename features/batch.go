package features

import (
	"fmt"
	"math"
)

// Batch is a block of consecutive rows of a feature file, row-major.
// Slices read from a file may point into the file's memory map: they are
// valid until the File is closed.
type Batch struct {
	Dim int
	// Features holds Rows()·Dim values, row i at [i·Dim, (i+1)·Dim).
	Features []float32
	// Labels holds one label per row; Unlabeled (−1) marks a null label.
	Labels []int32
	// IDs is nil, or holds one id per row ("" for a null id).
	IDs []string
	// Offset is the index in the file of the batch's first row.
	Offset int64
}

// Rows returns the number of rows in the batch.
func (b Batch) Rows() int { return len(b.Labels) }

// Row returns the features of row i.
func (b Batch) Row(i int) []float32 { return b.Features[i*b.Dim : (i+1)*b.Dim] }

// check verifies the shape of the batch and, unless allowNonFinite, that
// every feature is finite; labels must lie in [−1, classes) (any
// non-negative label when classes is 0). Errors name the absolute row.
func (b Batch) check(classes int, allowNonFinite bool) error {
	n := len(b.Labels)
	if b.Dim < 1 {
		return fmt.Errorf("feature dimension must be at least 1, got %d", b.Dim)
	}
	if len(b.Features) != n*b.Dim {
		return fmt.Errorf("batch at row %d: %d feature values for %d rows of dimension %d; expected %d", b.Offset, len(b.Features), n, b.Dim, n*b.Dim)
	}
	if b.IDs != nil && len(b.IDs) != n {
		return fmt.Errorf("batch at row %d: %d ids for %d rows", b.Offset, len(b.IDs), n)
	}
	for i, l := range b.Labels {
		if l < Unlabeled || (classes > 0 && l >= int32(classes)) {
			return fmt.Errorf("row %d%s: label %d out of range; expected 0..%d (or null for unlabeled)", b.Offset+int64(i), b.idSuffix(i), l, classes-1)
		}
	}
	if !allowNonFinite {
		for j, v := range b.Features {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				i := j / b.Dim
				return fmt.Errorf("row %d%s: feature %d is %v; expected finite values", b.Offset+int64(i), b.idSuffix(i), j%b.Dim, v)
			}
		}
	}
	return nil
}

func (b Batch) idSuffix(i int) string {
	if b.IDs == nil || b.IDs[i] == "" {
		return ""
	}
	return fmt.Sprintf(" (id %q)", b.IDs[i])
}
