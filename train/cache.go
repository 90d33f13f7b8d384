package train

import (
	"fmt"
	"sync"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/solvers"
)

// Cache keeps what Fit reads from a training file for later fits of the
// same file, each part computed once: the file's check (classes, a label
// on every row), the rows an Exclude rule selects, a multi-view file's
// grouping by example, and the in-memory methods' prepared rows. A sweep's jobs share one, so a dataset is read,
// split and prepared once however many jobs fit it. A nil *Cache caches
// nothing. The files must not change while a Cache is in use.
type Cache struct {
	mu     sync.Mutex
	checks map[string]*once[struct{}]
	masks  map[maskKey]*once[[]bool]
	groups map[maskKey]*once[*grouping]
	data   map[dataKey]*once[*solvers.Data]
}

type maskKey struct {
	path string
	rule *features.RowRule
}

type dataKey struct {
	maskKey
	normalize bool
}

// once is a value computed on first use.
type once[T any] struct {
	do  sync.Once
	v   T
	err error
}

func (o *once[T]) get(f func() (T, error)) (T, error) {
	o.do.Do(func() { o.v, o.err = f() })
	return o.v, o.err
}

// slot returns the cached value's holder for key in the map field(c)
// names, or a fresh one that is not kept when the cache is nil.
func slot[K comparable, T any](c *Cache, field func(*Cache) *map[K]*once[T], key K) *once[T] {
	if c == nil {
		return &once[T]{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := field(c)
	if *m == nil {
		*m = map[K]*once[T]{}
	}
	o, ok := (*m)[key]
	if !ok {
		o = &once[T]{}
		(*m)[key] = o
	}
	return o
}

// checked checks the open training file once: at least two classes and a
// label on every row (CheckClasses, CountLabels).
func (c *Cache) checked(tf *features.File, path string) error {
	_, err := slot(c, func(c *Cache) *map[string]*once[struct{}] { return &c.checks }, path).get(func() (struct{}, error) {
		if err := CheckClasses(path, tf.Metadata().Classes); err != nil {
			return struct{}{}, err
		}
		_, err := CountLabels(fileRows{tf}, path, len(tf.Metadata().Classes))
		return struct{}{}, err
	})
	return err
}

// excluded marks, once per file and rule, the rows the rule selects.
func (c *Cache) excluded(tf *features.File, path string, rule *features.RowRule) ([]bool, error) {
	return slot(c, func(c *Cache) *map[maskKey]*once[[]bool] { return &c.masks }, maskKey{path, rule}).get(func() ([]bool, error) {
		selected, _, err := rule.SelectFile(tf)
		mask := make([]bool, tf.Rows())
		for _, i := range selected {
			mask[i] = true
		}
		return mask, err
	})
}

// prepared loads and prepares the rows once per file, rule and
// normalisation (solvers.Prepare: normalised, grouped by class). The
// solvers only read the result, so concurrent fits share it.
func (c *Cache) prepared(rows solvers.Rows, key dataKey, classes int) (*solvers.Data, error) {
	return slot(c, func(c *Cache) *map[dataKey]*once[*solvers.Data] { return &c.data }, key).get(func() (*solvers.Data, error) {
		data, err := solvers.PrepareRows(rows, classes, key.normalize)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key.path, err)
		}
		return data, nil
	})
}

// Check opens a training file and checks it as Fit does (CheckClasses,
// CountLabels; once per cache), and returns its metadata, dimension and
// number of rows.
//
// imp says how to read a training file of another tool (the Import of the
// fits' Requests).
func (c *Cache) Check(path string, imp features.ImportOptions) (features.Metadata, int, int64, error) {
	tf, err := features.Open(path, features.ReadOptions{Import: imp})
	if err != nil {
		return features.Metadata{}, 0, 0, err
	}
	defer tf.Close()
	if err := c.checked(tf, path); err != nil {
		return features.Metadata{}, 0, 0, err
	}
	return tf.Metadata(), tf.Dim(), tf.Rows(), nil
}

// Held returns the rows of a training file that rule selects — what a fit
// with Exclude: rule leaves out, a sweep's validation rows — in file
// order, and how many rows are left for training. The selection is the
// one later fits through this cache use (computed once).
func (c *Cache) Held(path string, imp features.ImportOptions, rule *features.RowRule) (*features.Matrix, int64, error) {
	tf, err := features.Open(path, features.ReadOptions{Import: imp})
	if err != nil {
		return nil, 0, err
	}
	defer tf.Close()
	mask, err := c.excluded(tf, path, rule)
	if err != nil {
		return nil, 0, err
	}
	var rows features.Batch
	err = tf.Each(func(b features.Batch) error {
		for i := 0; i < b.Rows(); i++ {
			if mask[b.Offset+int64(i)] {
				rows.AppendRow(b, i)
			}
		}
		return nil
	})
	held := &features.Matrix{Dim: tf.Dim(), Meta: tf.Metadata(), Rows: len(rows.Labels),
		Data: rows.Features, Labels: rows.Labels, IDs: rows.IDs, Examples: rows.Examples}
	return held, tf.Rows() - int64(held.Rows), err
}

// maskedRows streams the rows of a file that a mask does not exclude.
type maskedRows struct {
	f    *features.File
	mask []bool
}

func (r maskedRows) Dim() int { return r.f.Dim() }

// Groups and Weights are nil, as fileRows'.
func (r maskedRows) Groups() []int32    { return nil }
func (r maskedRows) Weights() []float64 { return nil }

func (r maskedRows) Len() int64 {
	var n int64
	for _, x := range r.mask {
		if !x {
			n++
		}
	}
	return n
}

func (r maskedRows) Each(fn func(x []float32, y []int32) error) error {
	var x []float32
	var y []int32
	return r.f.Each(func(b features.Batch) error {
		x, y = x[:0], y[:0]
		for i := 0; i < b.Rows(); i++ {
			if !r.mask[b.Offset+int64(i)] {
				x, y = append(x, b.Row(i)...), append(y, b.Labels[i])
			}
		}
		if len(y) == 0 {
			return nil
		}
		return fn(x, y)
	})
}
