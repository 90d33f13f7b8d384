package train

import (
	"fmt"
	"sync"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/solvers"
)

// Cache keeps what Fit loads from a training file for later fits of the
// same file: the rows an Exclude rule leaves out and the in-memory
// methods' prepared rows. A sweep's jobs share one, so a dataset is read
// and prepared once however many jobs fit it. A nil *Cache caches nothing.
// The files must not change while a Cache is in use.
type Cache struct {
	mu      sync.Mutex
	entries map[cacheKey]*cacheEntry
}

type cacheKey struct {
	path      string
	exclude   *features.RowRule
	normalize bool
}

// cacheEntry is one training file as one request reads it; each part is
// computed once, on first use.
type cacheEntry struct {
	checkOnce sync.Once
	checkErr  error

	maskOnce sync.Once
	mask     []bool // excluded rows, by file row
	maskErr  error

	dataOnce sync.Once
	data     *solvers.Data
	dataErr  error
}

// entry returns the cached entry of a request, or a fresh uncached one.
func (c *Cache) entry(path string, exclude *features.RowRule, normalize bool) *cacheEntry {
	if c == nil {
		return &cacheEntry{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[cacheKey]*cacheEntry{}
	}
	k := cacheKey{path, exclude, normalize}
	e, ok := c.entries[k]
	if !ok {
		e = &cacheEntry{}
		c.entries[k] = e
	}
	return e
}

// checked checks once that every row of the file has a label.
func (e *cacheEntry) checked(tf *features.File, path string, classes int) error {
	e.checkOnce.Do(func() { _, e.checkErr = CountLabels(fileRows{tf}, path, classes) })
	return e.checkErr
}

// excluded marks once the rows the rule selects.
func (e *cacheEntry) excluded(tf *features.File, rule *features.RowRule) ([]bool, error) {
	e.maskOnce.Do(func() {
		e.mask = make([]bool, tf.Rows())
		e.maskErr = tf.Each(func(b features.Batch) error {
			for i := 0; i < b.Rows(); i++ {
				id := ""
				if b.IDs != nil {
					id = b.IDs[i]
				}
				e.mask[b.Offset+int64(i)] = rule.Selects(id, b.Labels[i], b.Row(i))
			}
			return nil
		})
	})
	return e.mask, e.maskErr
}

// prepared loads and prepares the rows once (solvers.Prepare: normalised,
// grouped by class). The solvers only read the result, so concurrent fits
// share it.
func (e *cacheEntry) prepared(rows solvers.Rows, path string, classes int, normalize bool) (*solvers.Data, error) {
	e.dataOnce.Do(func() {
		d := rows.Dim()
		x := make([]float32, 0, rows.Len()*int64(d))
		y := make([]int32, 0, rows.Len())
		if e.dataErr = rows.Each(func(bx []float32, by []int32) error {
			x, y = append(x, bx...), append(y, by...)
			return nil
		}); e.dataErr != nil {
			return
		}
		if e.data, e.dataErr = solvers.Prepare(x, y, d, classes, normalize); e.dataErr != nil {
			e.dataErr = fmt.Errorf("%s: %w", path, e.dataErr)
		}
	})
	return e.data, e.dataErr
}

// maskedRows streams the rows of a file that a mask does not exclude.
type maskedRows struct {
	f    *features.File
	mask []bool
}

func (r maskedRows) Dim() int { return r.f.Dim() }

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
