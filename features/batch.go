package features

import (
	"fmt"
	"math"
	"runtime"
	"sync"
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
	// Examples, in a multi-view file, holds the private example each row
	// came from; nil otherwise.
	Examples []string
	// MixLabels and MixLambdas, in a multi-view file with mixups with
	// public images (Views.MixDiff), give a mixup row its soft label
	// λ·Labels[i] + (1 − λ)·MixLabels[i], λ = MixLambdas[i]; Unlabeled in
	// MixLabels for the example's other rows. Both nil otherwise.
	MixLabels  []int32
	MixLambdas []float32
	// Offset is the index in the file of the batch's first row.
	Offset int64
}

// AppendRow appends row i of b, every column it has, to out.
func (out *Batch) AppendRow(b Batch, i int) {
	out.Features = append(out.Features, b.Row(i)...)
	out.Labels = append(out.Labels, b.Labels[i])
	if b.IDs != nil {
		out.IDs = append(out.IDs, b.IDs[i])
	}
	if b.Examples != nil {
		out.Examples = append(out.Examples, b.Examples[i])
	}
	if b.MixLabels != nil {
		out.MixLabels, out.MixLambdas = append(out.MixLabels, b.MixLabels[i]), append(out.MixLambdas, b.MixLambdas[i])
	}
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
	if b.Examples != nil && len(b.Examples) != n {
		return fmt.Errorf("batch at row %d: %d example ids for %d rows", b.Offset, len(b.Examples), n)
	}
	if (b.MixLabels == nil) != (b.MixLambdas == nil) || (b.MixLabels != nil && (len(b.MixLabels) != n || len(b.MixLambdas) != n || b.Examples == nil)) {
		return fmt.Errorf("batch at row %d: %d mix labels and %d mix λs for %d rows (a multi-view file's mixups carry both)", b.Offset, len(b.MixLabels), len(b.MixLambdas), n)
	}
	for i, l := range b.MixLabels {
		if l == Unlabeled {
			continue
		}
		if l < 0 || (classes > 0 && l >= int32(classes)) || b.Labels[i] == Unlabeled {
			return fmt.Errorf("row %d: mix label or label out of range; expected both in 0..%d", b.Offset+int64(i), classes-1)
		}
		if lam := b.MixLambdas[i]; !(lam >= 0 && lam <= 1) {
			return fmt.Errorf("row %d: mix λ %v; expected a value in [0, 1]", b.Offset+int64(i), lam)
		}
	}
	for i, l := range b.Labels {
		if l < Unlabeled || (classes > 0 && l >= int32(classes)) {
			return fmt.Errorf("row %d: label out of range; expected 0..%d (or null for unlabeled)", b.Offset+int64(i), classes-1)
		}
	}
	if !allowNonFinite {
		if j := FirstNonFinite(b.Features); j >= 0 {
			i := j / b.Dim
			return fmt.Errorf("row %d: feature %d is %v; expected finite values", b.Offset+int64(i), j%b.Dim, b.Features[j])
		}
	}
	return nil
}

// FirstNonFinite returns the index of the first NaN or ±Inf in v, or −1:
// the one finiteness scan of feature rows, parameters and models. A large
// slice is scanned in parts on all cores.
func FirstNonFinite(v []float32) int {
	parts := min(runtime.GOMAXPROCS(0), len(v)>>18)
	if parts <= 1 {
		return firstNonFinite(v)
	}
	found := make([]int, parts)
	var wg sync.WaitGroup
	for p := range found {
		lo, hi := p*len(v)/parts, (p+1)*len(v)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			found[p] = -1
			if j := firstNonFinite(v[lo:hi]); j >= 0 {
				found[p] = lo + j
			}
		}()
	}
	wg.Wait()
	for _, j := range found {
		if j >= 0 {
			return j // the parts are in order: the first found is the first
		}
	}
	return -1
}

// firstNonFinite is FirstNonFinite on one core. A float32 is not finite
// exactly when its exponent bits are all ones; the bits are OR-ed in
// blocks so the common all-finite case costs one compare per block.
func firstNonFinite(v []float32) int {
	const exp = 0x7f800000
	const block = 256
	for start := 0; start < len(v); start += block {
		end := min(start+block, len(v))
		bad := false
		for _, x := range v[start:end] {
			bad = bad || math.Float32bits(x)&exp == exp
		}
		if bad {
			for j := start; j < end; j++ {
				if math.Float32bits(v[j])&exp == exp {
					return j
				}
			}
		}
	}
	return -1
}
