package solvers

import (
	"fmt"
	"math"
	"sort"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/bigmem"
	"github.com/dpfeat/dpfeat/preprocessing"
)

// Prepare turns a feature matrix into solver data: each row is scaled to
// unit L2 norm if normalize (a per-example map that costs no privacy; the
// default, which makes every clipping norm scale-free). Rows are grouped by
// class (stable within a class), so that per-class statistics are
// contiguous blocks.
func Prepare(m *features.Matrix, classes int, normalize bool) (*Data, error) {
	if m.Rows == 0 {
		return nil, fmt.Errorf("no rows")
	}
	// A stable counting sort by label (unlabeled rows, −1, first).
	bucket := func(l int32) int { return min(max(int(l)+1, 0), classes+1) }
	counts := make([]int, classes+2)
	for _, l := range m.Labels {
		counts[bucket(l)]++
	}
	starts := make([]int, len(counts))
	for i := 1; i < len(counts); i++ {
		starts[i] = starts[i-1] + counts[i-1]
	}
	order := make([]int, m.Rows)
	for i, l := range m.Labels {
		k := bucket(l)
		order[starts[k]] = i
		starts[k]++
	}
	d := &Data{X: bigmem.Float64s(m.Rows * m.Dim), Y: make([]int32, m.Rows), N: m.Rows, D: m.Dim, M: classes}
	for k, i := range order {
		d.Y[k] = m.Labels[i]
		row := d.X[k*m.Dim : (k+1)*m.Dim]
		for j, v := range m.Row(i) {
			row[j] = float64(v)
		}
		Preprocessing{Normalize: normalize}.Apply(row)
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

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// fileSource streams a feature file's rows as a PublicSource.
type fileSource struct {
	f         *features.File
	normalize bool
}

// FileSource streams the rows of a feature file (memory-mapped, record
// batch by record batch), unit-normalised if normalize, so that public data
// of any size costs one block of memory.
func FileSource(f *features.File, normalize bool) PublicSource {
	return fileSource{f: f, normalize: normalize}
}

func (s fileSource) Dim() int  { return s.f.Dim() }
func (s fileSource) Rows() int { return int(s.f.Rows()) }

func (s fileSource) Each(fn func(block []float64, rows int) error) error {
	d := s.f.Dim()
	buf := make([]float64, PublicBlock*d)
	return s.f.Each(func(b features.Batch) error {
		for start := 0; start < b.Rows(); start += PublicBlock {
			n := min(PublicBlock, b.Rows()-start)
			blk := buf[:n*d]
			for i, v := range b.Features[start*d : (start+n)*d] {
				blk[i] = float64(v)
			}
			if s.normalize {
				for i := 0; i < n; i++ {
					Preprocessing{Normalize: true}.Apply(blk[i*d : (i+1)*d])
				}
			}
			if err := fn(blk, n); err != nil {
				return err
			}
		}
		return nil
	})
}
