package features

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// Profile is the shape of an imbalanced class profile.
type Profile string

const (
	// ProfileCui is Cui et al. (2019), "Class-Balanced Loss Based on
	// Effective Number of Samples", as the DPPL paper (App. B.2) uses it:
	// n_c = n_max · IR^(−c/(C−1)), so the last class has n_max/IR.
	ProfileCui Profile = "cui"
	// ProfileDPPL is the variant in the DPPL authors' code:
	// n_c = n_max · exp(−c · ln(IR)/C).
	ProfileDPPL Profile = "dppl"
)

// ImbalanceFactors returns the per-class size factors of an imbalanced
// profile with imbalance ratio ir ≥ 1 over the given number of classes:
// class 0 has factor 1, and n_c = n_max·f_c.
func ImbalanceFactors(classes int, ir float64, p Profile) ([]float64, error) {
	if classes < 1 {
		return nil, fmt.Errorf("need at least one class, got %d", classes)
	}
	if math.IsNaN(ir) || ir < 1 || math.IsInf(ir, 0) {
		return nil, fmt.Errorf("imbalance ratio must be a finite number ≥ 1, got %v", ir)
	}
	out := make([]float64, classes)
	for c := range out {
		switch p {
		case ProfileCui, "":
			out[c] = 1
			if classes > 1 {
				out[c] = math.Pow(ir, -float64(c)/float64(classes-1))
			}
		case ProfileDPPL:
			out[c] = math.Exp(-float64(c) * math.Log(ir) / float64(classes))
		default:
			return nil, fmt.Errorf("unknown imbalance profile %q (want cui or dppl)", p)
		}
	}
	return out, nil
}

// ImbalancedCounts returns the per-class sizes of an imbalanced profile
// with n_max examples in class 0: n_max·f_c rounded down, never below 1.
func ImbalancedCounts(nmax, classes int, ir float64, p Profile) ([]int, error) {
	if nmax < 1 {
		return nil, fmt.Errorf("need at least one example in class 0, got n_max %d", nmax)
	}
	f, err := ImbalanceFactors(classes, ir, p)
	if err != nil {
		return nil, err
	}
	out := make([]int, classes)
	for c := range out {
		// A small tolerance keeps exact products (n_max/IR) from rounding
		// one below.
		out[c] = max(1, int(math.Floor(float64(nmax)*f[c]+1e-9)))
	}
	return out, nil
}

// RowRule is a per-row selection rule: whether a row is selected is a
// keyed hash of that row alone — its id when it has one, else its label
// and feature bytes — compared with a per-class threshold. Adding or
// removing one row therefore changes no other row's selection, which is
// what lets a split or subset of private data compose in parallel
// (training and validation rows are disjoint as a function of each row)
// and lets a fit on a derived file be charged to the parent data's
// budget. A shuffled, stratified split or a fixed-count subset (the former
// rules) is not stable: removing one row moved thousands of others.
//
// The key is HMAC-SHA256 under a key derived from the seed and the rule's
// kind; the seed is public (it only makes the selection reproducible).
// Exact counts vary binomially around their expectations.
type RowRule struct {
	key        [32]byte
	thresholds []uint64 // per class (one for all when len 1): hash < threshold selects
}

func newRowRule(kind string, seed uint64, rates []float64) *RowRule {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	r := &RowRule{key: sha256.Sum256(append([]byte("dpfeat "+kind+" v1:"), b[:]...))}
	for _, p := range rates {
		// p·2⁶⁴ rounded down: P(hash < t) = t/2⁶⁴; p = 1 selects all.
		t := uint64(math.MaxUint64)
		if p < 1 {
			t = uint64(math.Ldexp(p, 64))
		}
		r.thresholds = append(r.thresholds, t)
	}
	return r
}

// NewRowSplit returns the validation split's rule: a row goes to
// validation with probability fraction ∈ (0, 1).
func NewRowSplit(fraction float64, seed uint64) (*RowRule, error) {
	if !(fraction > 0 && fraction < 1) {
		return nil, fmt.Errorf("validation fraction must be in (0, 1), got %v", fraction)
	}
	return newRowRule("row split", seed, []float64{fraction}), nil
}

// NewImbalance returns a long-tailed subset's rule: a row of class c is
// kept with probability rate·f_c, f_c the profile's factor (ImbalanceFactors:
// 1 for class 0, 1/IR for the last under cui), so that the expected class
// sizes follow the profile on balanced data. rate ∈ (0, 1] is class 0's
// keep probability. Unlabeled rows are dropped.
func NewImbalance(classes int, ir float64, p Profile, rate float64, seed uint64) (*RowRule, error) {
	if !(rate > 0 && rate <= 1) {
		return nil, fmt.Errorf("keep rate must be in (0, 1], got %v", rate)
	}
	f, err := ImbalanceFactors(classes, ir, p)
	if err != nil {
		return nil, err
	}
	for c := range f {
		f[c] *= rate
	}
	return newRowRule("imbalance", seed, f), nil
}

// Selects reports whether the rule selects the row (for a split: whether
// it goes to validation).
func (r *RowRule) Selects(id string, label int32, feats []float32) bool {
	t := r.thresholds[0]
	if len(r.thresholds) > 1 {
		if label < 0 || int(label) >= len(r.thresholds) {
			return false
		}
		t = r.thresholds[label]
	}
	mac := hmac.New(sha256.New, r.key[:])
	if id != "" {
		mac.Write([]byte{'i'})
		mac.Write([]byte(id))
	} else {
		var buf [4]byte
		mac.Write([]byte{'r'})
		binary.LittleEndian.PutUint32(buf[:], uint32(label))
		mac.Write(buf[:])
		row := make([]byte, 4*len(feats))
		for k, v := range feats {
			binary.LittleEndian.PutUint32(row[4*k:], math.Float32bits(v))
		}
		mac.Write(row)
	}
	h := binary.BigEndian.Uint64(mac.Sum(nil))
	return h < t || t == math.MaxUint64
}

// Select applies a rule to every row of a matrix: the selected rows and the
// others, both in file order (either may be empty on small data).
func (r *RowRule) Select(m *Matrix) (selected, others []int) {
	r.split(Batch{Dim: m.Dim, Features: m.Data, Labels: m.Labels, IDs: m.IDs, Examples: m.Examples}, &selected, &others)
	return selected, others
}

// SelectFile is Select over a feature file, streamed batch by batch; a
// file whose ids may be positional is refused (CheckExampleIDs).
func (r *RowRule) SelectFile(f *File) (selected, others []int, err error) {
	if err := CheckExampleIDs(f); err != nil {
		return nil, nil, err
	}
	err = f.Each(func(b Batch) error {
		r.split(b, &selected, &others)
		return nil
	})
	return selected, others, err
}

// split appends the file rows of b the rule selects to selected, the
// others to others. In a multi-view file the rule reads each row's
// example, so that an example's views all go the same way: the example,
// not the row, is the unit a split or a subset keeps whole.
func (r *RowRule) split(b Batch, selected, others *[]int) {
	for i := 0; i < b.Rows(); i++ {
		id := ""
		switch {
		case b.Examples != nil:
			id = b.Examples[i]
		case b.IDs != nil:
			id = b.IDs[i]
		}
		if r.Selects(id, b.Labels[i], b.Row(i)) {
			*selected = append(*selected, int(b.Offset)+i)
		} else {
			*others = append(*others, int(b.Offset)+i)
		}
	}
}

// CopyRows writes the given rows (ascending) of src to a new feature file at
// path with the given metadata, streaming batch by batch; a multi-view
// file's rows keep their example (meta.Views must be src's).
func CopyRows(src *File, rows []int, path string, meta Metadata) error {
	if !sort.IntsAreSorted(rows) {
		return fmt.Errorf("write %s: rows must be in ascending order", path)
	}
	if (meta.Views != nil) != (src.Views() != nil) {
		return fmt.Errorf("write %s: a copy of a multi-view file is multi-view, and only such a copy", path)
	}
	w, err := Create(path, src.Dim(), meta, WriterOptions{WithID: src.HasIDs()})
	if err != nil {
		return err
	}
	k := 0
	err = src.Each(func(b Batch) error {
		out := Batch{Dim: b.Dim}
		end := b.Offset + int64(b.Rows())
		for ; k < len(rows) && int64(rows[k]) < end; k++ {
			out.AppendRow(b, int(int64(rows[k])-b.Offset))
		}
		return w.Write(out)
	})
	if err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}
