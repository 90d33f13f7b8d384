package train

import (
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/solvers"
)

// fileRows streams a feature file to a solver (solvers.Rows), record batch
// by record batch from its memory map: the solvers see rows through their
// own interface and never import features.
type fileRows struct{ f *features.File }

// FileRows streams a feature file's rows, as they are, to a solver (one
// row per example: a multi-view file is grouped by Fit).
func FileRows(f *features.File) solvers.Rows { return fileRows{f} }

func (r fileRows) Dim() int   { return r.f.Dim() }
func (r fileRows) Len() int64 { return r.f.Rows() }

// Groups is nil: a file streamed as it is has one row per example (a
// multi-view file is streamed by groupedRows).
func (r fileRows) Groups() []int32    { return nil }
func (r fileRows) Weights() []float64 { return nil }
func (r fileRows) Each(fn func(x []float32, y []int32) error) error {
	return r.f.Each(func(b features.Batch) error { return fn(b.Features, b.Labels) })
}

// fileSource streams a feature file's rows as a solvers.PublicSource,
// unit-normalised if normalize, so that public data of any size costs one
// block of memory.
type fileSource struct {
	f         *features.File
	normalize bool
}

func (s fileSource) Dim() int  { return s.f.Dim() }
func (s fileSource) Rows() int { return int(s.f.Rows()) }

func (s fileSource) Each(fn func(block []float64, rows int) error) error {
	d := s.f.Dim()
	buf := make([]float64, solvers.PublicBlock*d)
	prep := solvers.Preprocessing{Normalize: s.normalize}
	return s.f.Each(func(b features.Batch) error {
		for start := 0; start < b.Rows(); start += solvers.PublicBlock {
			n := min(solvers.PublicBlock, b.Rows()-start)
			blk := buf[:n*d]
			for i, v := range b.Features[start*d : (start+n)*d] {
				blk[i] = float64(v)
			}
			for i := 0; i < n; i++ {
				prep.Apply(blk[i*d : (i+1)*d])
			}
			if err := fn(blk, n); err != nil {
				return err
			}
		}
		return nil
	})
}
