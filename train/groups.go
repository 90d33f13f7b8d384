package train

import (
	"fmt"
	"sort"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/solvers"
)

// A multi-view training file (features.Views: several rows per private
// example, each naming its example) reaches the solvers as grouped rows:
// every example's rows consecutive, in blocks that never split one, with
// the number of rows of each (solvers.Rows.Groups), so that the methods
// average an example's rows before clipping and count it once. The rows
// of one example may be anywhere in the file.

// grouping says how the kept rows of a multi-view file group into examples.
type grouping struct {
	// order lists the file's rows example by example (each example's rows
	// in file order, examples in order of their first row); nil when the
	// kept rows are in that order already.
	order []int64
	// sizes is each example's number of rows, in that order.
	sizes []int32
	rows  int64
}

// groupExamples reads the example column of a multi-view file (the rows
// mask does not exclude) once. Memory: an int32 per row and the example
// ids, not the features. The rows of one example must share a label.
func groupExamples(tf *features.File, mask []bool, path string) (*grouping, error) {
	index := map[string]int32{}
	var sizes []int32
	var labels []int32
	var rowEx []int32
	scattered, prev := false, int32(-1)
	err := tf.Each(func(b features.Batch) error {
		for i, ex := range b.Examples {
			if mask != nil && mask[b.Offset+int64(i)] {
				continue
			}
			e, ok := index[ex]
			if !ok {
				e = int32(len(sizes))
				index[ex] = e
				sizes, labels = append(sizes, 0), append(labels, b.Labels[i])
			} else if labels[e] != b.Labels[i] {
				return fmt.Errorf("%s: row %d has label %d, an earlier row of its example %d; an example's views share its label", path, b.Offset+int64(i), b.Labels[i], labels[e])
			}
			if e != prev && ok {
				scattered = true
			}
			prev = e
			sizes[e]++
			rowEx = append(rowEx, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	g := &grouping{sizes: sizes, rows: int64(len(rowEx))}
	if !scattered {
		return g, nil
	}
	// A counting sort of the kept rows by example.
	next := make([]int64, len(sizes))
	var at int64
	for e, k := range sizes {
		next[e], at = at, at+int64(k)
	}
	g.order = make([]int64, len(rowEx))
	var kept int64
	for row := int64(0); row < tf.Rows(); row++ {
		if mask != nil && mask[row] {
			continue
		}
		e := rowEx[kept]
		g.order[next[e]] = row
		next[e]++
		kept++
	}
	return g, nil
}

// groupedRows streams a multi-view file's kept rows grouped by example
// (solvers.Rows with Groups).
type groupedRows struct {
	f    *features.File
	mask []bool
	g    *grouping
}

// groupBlock is how many rows a gathered block holds at most (whole
// examples).
const groupBlock = 4096

func (r groupedRows) Dim() int        { return r.f.Dim() }
func (r groupedRows) Len() int64      { return r.g.rows }
func (r groupedRows) Groups() []int32 { return r.g.sizes }

func (r groupedRows) Each(fn func(x []float32, y []int32) error) error {
	if r.g.order == nil {
		return r.inOrder(fn)
	}
	return r.gather(fn)
}

// inOrder streams the file's batches, each cut after its last complete
// example, the rest carried into the next (a file whose batches end on
// example edges, as extract writes them, is streamed as it is).
func (r groupedRows) inOrder(fn func(x []float32, y []int32) error) error {
	d := r.f.Dim()
	var x []float32
	var y []int32
	g, whole := 0, 0 // next example; rows of x that make whole examples
	err := r.f.Each(func(b features.Batch) error {
		if r.mask == nil && len(y) == 0 {
			x, y = b.Features, b.Labels
		} else {
			for i := 0; i < b.Rows(); i++ {
				if r.mask == nil || !r.mask[b.Offset+int64(i)] {
					x, y = append(x, b.Row(i)...), append(y, b.Labels[i])
				}
			}
		}
		for whole = 0; g < len(r.g.sizes) && whole+int(r.g.sizes[g]) <= len(y); g++ {
			whole += int(r.g.sizes[g])
		}
		if whole > 0 {
			if err := fn(x[:whole*d], y[:whole]); err != nil {
				return err
			}
		}
		// Keep the incomplete example in memory of its own.
		x = append([]float32(nil), x[whole*d:]...)
		y = append([]int32(nil), y[whole:]...)
		return nil
	})
	if err == nil && len(y) > 0 {
		err = fmt.Errorf("%s: %d rows left after the last whole example", r.f.Path(), len(y))
	}
	return err
}

// gather copies the rows in grouped order from the batches (memory-mapped:
// only one block of rows is copied at a time).
func (r groupedRows) gather(fn func(x []float32, y []int32) error) error {
	d := r.f.Dim()
	nb := r.f.NumBatches()
	feats, labels, starts := make([][]float32, nb), make([][]int32, nb), make([]int64, nb)
	for i := range nb {
		b, err := r.f.Batch(i)
		if err != nil {
			return err
		}
		feats[i], labels[i], starts[i] = b.Features, b.Labels, b.Offset
	}
	var x []float32
	var y []int32
	at, g := 0, 0
	for at < len(r.g.order) {
		n, g0 := 0, g
		for g < len(r.g.sizes) && (g == g0 || n+int(r.g.sizes[g]) <= groupBlock) {
			n += int(r.g.sizes[g])
			g++
		}
		x, y = x[:0], y[:0]
		for _, row := range r.g.order[at : at+n] {
			bi := sort.Search(nb, func(i int) bool { return starts[i] > row }) - 1
			off := int(row - starts[bi])
			x, y = append(x, feats[bi][off*d:(off+1)*d]...), append(y, labels[bi][off])
		}
		if err := fn(x, y); err != nil {
			return err
		}
		at += n
	}
	return nil
}

// examplesIn returns the training rows a fit streams: grouped by example
// for a multi-view file (the grouping read once per file and rule), else
// rows as they are.
func (c *Cache) examplesIn(tf *features.File, rows solvers.Rows, mask []bool, key maskKey) (solvers.Rows, error) {
	if tf.Views() == nil {
		return rows, nil
	}
	g, err := slot(c, func(c *Cache) *map[maskKey]*once[*grouping] { return &c.groups }, key).get(func() (*grouping, error) {
		return groupExamples(tf, mask, key.path)
	})
	if err != nil {
		return nil, err
	}
	return groupedRows{f: tf, mask: mask, g: g}, nil
}
