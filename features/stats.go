package features

import (
	"math"
	"sort"
)

// Summary describes a feature file for people: what `dpfeat inspect`
// prints.
type Summary struct {
	Rows int64 `json:"rows"`
	// Examples, in a multi-view file, is the number of distinct examples
	// its rows name (0 otherwise).
	Examples  int64    `json:"examples,omitempty"`
	Dim       int      `json:"dim"`
	Batches   int      `json:"record_batches"`
	HasIDs    bool     `json:"has_ids"`
	Classes   []string `json:"classes"`
	Counts    []int64  `json:"class_counts"`
	Unlabeled int64    `json:"unlabeled"`
	// LabelMin and LabelMax are the smallest and largest label present
	// (−1 when no row is labeled).
	LabelMin int32 `json:"label_min"`
	LabelMax int32 `json:"label_max"`
	// NormQuantiles are quantiles of the rows' L2 norms, at NormLevels.
	NormLevels    []float64 `json:"norm_quantile_levels"`
	NormQuantiles []float64 `json:"norm_quantiles,omitempty"`
	// NonFinite counts NaN and ±Inf values; NonFiniteRows the rows with one.
	NonFinite     int64             `json:"non_finite_values"`
	NonFiniteRows int64             `json:"non_finite_rows"`
	Metadata      map[string]string `json:"metadata"`
}

// NormLevels are the quantile levels Summarize reports.
var NormLevels = []float64{0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1}

// Summarize reads the whole file once and describes it; rows with
// non-finite values are counted and left out of the norm quantiles. Open
// the file with AllowNonFinite to summarize a file that has some.
func Summarize(f *File, md map[string]string) (Summary, error) {
	s := Summary{Rows: f.Rows(), Dim: f.Dim(), Batches: f.NumBatches(), HasIDs: f.HasIDs(),
		Classes: f.Classes(), Counts: make([]int64, len(f.Classes())), LabelMin: -1, LabelMax: -1,
		NormLevels: NormLevels, Metadata: md}
	if s.Classes == nil {
		s.Classes = []string{}
	}
	norms := make([]float64, 0, f.Rows())
	examples := map[string]struct{}{}
	err := f.Each(func(b Batch) error {
		for _, e := range b.Examples {
			examples[e] = struct{}{}
		}
		for i := 0; i < b.Rows(); i++ {
			l := b.Labels[i]
			if l == Unlabeled {
				s.Unlabeled++
			} else {
				if int(l) < len(s.Counts) {
					s.Counts[l]++
				}
				if s.LabelMin < 0 || l < s.LabelMin {
					s.LabelMin = l
				}
				if l > s.LabelMax {
					s.LabelMax = l
				}
			}
			var ss float64
			bad := int64(0)
			for _, v := range b.Row(i) {
				x := float64(v)
				if math.IsNaN(x) || math.IsInf(x, 0) {
					bad++
					continue
				}
				ss += x * x
			}
			if bad > 0 {
				s.NonFinite += bad
				s.NonFiniteRows++
				continue
			}
			norms = append(norms, math.Sqrt(ss))
		}
		return nil
	})
	s.Examples = int64(len(examples))
	if err != nil {
		return s, err
	}
	if len(norms) == 0 {
		return s, nil // no finite row: no quantiles
	}
	sort.Float64s(norms)
	s.NormQuantiles = make([]float64, len(NormLevels))
	for i, q := range NormLevels {
		s.NormQuantiles[i] = quantile(norms, q)
	}
	return s, nil
}

// quantile returns the q-quantile of sorted xs by linear interpolation
// (NaN for no values).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(xs)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(xs)-1)
	return xs[lo] + (pos-float64(lo))*(xs[hi]-xs[lo])
}

// ArrowMetadata returns the file's schema metadata as a map, every key
// included.
func (f *File) ArrowMetadata() map[string]string {
	if f.shards != nil {
		return f.shards[0].ArrowMetadata()
	}
	md := f.r.Schema().Metadata()
	out := make(map[string]string, md.Len())
	for i, k := range md.Keys() {
		out[k] = md.Values()[i]
	}
	return out
}
