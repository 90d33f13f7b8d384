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
//
// A row with a soft label (a mixup with a public image: label y,
// mix_label y′, mix_lambda λ) reaches them as two rows of its features,
// labels y and y′, weights λ and 1 − λ (solvers.Data.W); every other row
// weighs 1. The example's own half comes first, so an example's first row
// carries its label.

// grouping says how the kept rows of a multi-view file group into examples.
type grouping struct {
	// order lists the file's rows example by example (each example's rows
	// in file order, examples in order of their first row); nil when the
	// kept rows are in that order already.
	order []int64
	// sizes is each example's number of rows as the solvers see them (a
	// soft-labelled row is two), in that order.
	sizes []int32
	rows  int64
	// w is each solver row's weight (solvers.Rows.Weights), nil when the
	// file has no soft labels.
	w []float64
}

// softLabel returns row i's soft label — the other class y′ and the
// example's share λ — and whether it has one.
func softLabel(b features.Batch, i int) (int32, float32, bool) {
	if b.MixLabels == nil || b.MixLabels[i] == features.Unlabeled {
		return 0, 0, false
	}
	return b.MixLabels[i], b.MixLambdas[i], true
}

// expand appends file row i of b to x and y as the solvers see it: once,
// or, with a soft label, twice (labels y and y′).
func expand(b features.Batch, i int, x []float32, y []int32) ([]float32, []int32) {
	x, y = append(x, b.Row(i)...), append(y, b.Labels[i])
	if y2, _, ok := softLabel(b, i); ok {
		x, y = append(x, b.Row(i)...), append(y, y2)
	}
	return x, y
}

// groupExamples reads the example column of a multi-view file (the rows
// mask does not exclude) once. Memory: an int32 per row and the example
// ids, not the features. The rows of one example must share a label.
func groupExamples(tf *features.File, mask []bool, path string) (*grouping, error) {
	index := map[string]int32{}
	var sizes, count []int32 // each example's solver rows and file rows
	var labels []int32
	var rowEx []int32
	var lambda []float32 // each kept row's λ, −1 without a soft label
	mixes := tf.Views() != nil && tf.Views().MixDiff > 0
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
				sizes, count, labels = append(sizes, 0), append(count, 0), append(labels, b.Labels[i])
			} else if labels[e] != b.Labels[i] {
				return fmt.Errorf("%s: row %d has label %d, an earlier row of its example %d; an example's views share its label", path, b.Offset+int64(i), b.Labels[i], labels[e])
			}
			if e != prev && ok {
				scattered = true
			}
			prev = e
			sizes[e]++
			count[e]++
			rowEx = append(rowEx, e)
			if mixes {
				l := float32(-1)
				if _, lam, ok := softLabel(b, i); ok {
					l = lam
					sizes[e]++
				}
				lambda = append(lambda, l)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	g := &grouping{sizes: sizes}
	for _, k := range sizes {
		g.rows += int64(k)
	}
	if scattered {
		// A counting sort of the kept rows by example (their λs along).
		next := make([]int64, len(count))
		var at int64
		for e, k := range count {
			next[e], at = at, at+int64(k)
		}
		g.order = make([]int64, len(rowEx))
		sorted := make([]float32, len(lambda))
		var kept int64
		for row := int64(0); row < tf.Rows(); row++ {
			if mask != nil && mask[row] {
				continue
			}
			e := rowEx[kept]
			g.order[next[e]] = row
			if mixes {
				sorted[next[e]] = lambda[kept]
			}
			next[e]++
			kept++
		}
		lambda = sorted
	}
	if mixes {
		// The solver rows' weights, in stream order.
		g.w = make([]float64, 0, g.rows)
		for _, l := range lambda {
			if l < 0 {
				g.w = append(g.w, 1)
			} else {
				g.w = append(g.w, float64(l), 1-float64(l))
			}
		}
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

func (r groupedRows) Dim() int           { return r.f.Dim() }
func (r groupedRows) Len() int64         { return r.g.rows }
func (r groupedRows) Groups() []int32    { return r.g.sizes }
func (r groupedRows) Weights() []float64 { return r.g.w }

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
		if r.mask == nil && len(y) == 0 && b.MixLabels == nil {
			x, y = b.Features, b.Labels
		} else {
			for i := 0; i < b.Rows(); i++ {
				if r.mask == nil || !r.mask[b.Offset+int64(i)] {
					x, y = expand(b, i, x, y)
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
	batches, starts := make([]features.Batch, nb), make([]int64, nb)
	for i := range nb {
		b, err := r.f.Batch(i)
		if err != nil {
			return err
		}
		// (only the columns expand reads: the ids would hold every
		// row's strings)
		batches[i] = features.Batch{Dim: b.Dim, Features: b.Features, Labels: b.Labels, MixLabels: b.MixLabels, MixLambdas: b.MixLambdas}
		starts[i] = b.Offset
	}
	x := make([]float32, 0, groupBlock*d)
	y := make([]int32, 0, groupBlock)
	at, g := 0, 0 // next file row of order; next example
	for at < len(r.g.order) {
		n, g0 := 0, g // the block's solver rows
		for g < len(r.g.sizes) && (g == g0 || n+int(r.g.sizes[g]) <= groupBlock) {
			n += int(r.g.sizes[g])
			g++
		}
		x, y = x[:0], y[:0]
		for ; len(y) < n; at++ {
			row := r.g.order[at]
			bi := sort.Search(nb, func(i int) bool { return starts[i] > row }) - 1
			x, y = expand(batches[bi], int(row-starts[bi]), x, y)
		}
		if err := fn(x, y); err != nil {
			return err
		}
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

// ExampleRows is tf's training rows as the solvers read them: grouped by
// example (a multi-view file: every example's rows consecutive) or as
// they are. path names tf in errors.
func ExampleRows(tf *features.File, path string) (solvers.Rows, error) {
	var c *Cache
	return c.examplesIn(tf, FileRows(tf), nil, maskKey{path: path})
}

// LoadData reads a training file into the solvers' prepared form — each
// example's rows grouped (a multi-view file), rows normalised unless
// noNormalize — as Fit prepares it for the methods that load their data:
// what an audit of two neighbouring files runs the method on.
func LoadData(path string, noNormalize bool) (*solvers.Data, features.Metadata, error) {
	tf, err := features.Open(path, features.ReadOptions{})
	if err != nil {
		return nil, features.Metadata{}, err
	}
	defer tf.Close()
	meta := tf.Metadata()
	if err := CheckClasses(path, meta.Classes); err != nil {
		return nil, meta, err
	}
	if tf.Views() != nil {
		if err := features.CheckExampleIDs(tf); err != nil {
			return nil, meta, err
		}
	}
	c := &Cache{}
	rows, err := ExampleRows(tf, path)
	if err != nil {
		return nil, meta, err
	}
	data, err := c.prepared(rows, dataKey{maskKey{path: path}, !noNormalize}, len(meta.Classes))
	return data, meta, err
}
