package features

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
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

// ImbalancedCounts returns the per-class sizes of an imbalanced profile with
// imbalance ratio ir ≥ 1 over the given number of classes, class 0 largest
// with nmax examples; sizes are rounded down but never below 1.
func ImbalancedCounts(nmax, classes int, ir float64, p Profile) ([]int, error) {
	if classes < 1 || nmax < 1 {
		return nil, fmt.Errorf("need at least one class and one example per class, got %d classes and n_max %d", classes, nmax)
	}
	if math.IsNaN(ir) || ir < 1 || math.IsInf(ir, 0) {
		return nil, fmt.Errorf("imbalance ratio must be a finite number ≥ 1, got %v", ir)
	}
	out := make([]int, classes)
	for c := range out {
		var f float64
		switch p {
		case ProfileCui, "":
			if classes == 1 {
				f = 1
			} else {
				f = math.Pow(ir, -float64(c)/float64(classes-1))
			}
		case ProfileDPPL:
			f = math.Exp(-float64(c) * math.Log(ir) / float64(classes))
		default:
			return nil, fmt.Errorf("unknown imbalance profile %q (want cui or dppl)", p)
		}
		// A small tolerance keeps exact products (n_max/IR) from rounding
		// one below.
		out[c] = max(1, int(math.Floor(float64(nmax)*f+1e-9)))
	}
	return out, nil
}

// classRows groups row indices by label; unlabeled rows are left out.
func classRows(labels []int32, classes int) ([][]int, error) {
	rows := make([][]int, classes)
	for i, l := range labels {
		if l == Unlabeled {
			continue
		}
		if l < 0 || int(l) >= classes {
			return nil, fmt.Errorf("row %d: label %d out of range 0..%d", i, l, classes-1)
		}
		rows[l] = append(rows[l], i)
	}
	return rows, nil
}

// ImbalancedSubset picks, for each class c, counts[c] of its rows at random
// (seeded) and returns the chosen rows in file order with the per-class
// counts. nmax ≤ 0 means the size of the smallest class, so that every class
// can supply its share.
func ImbalancedSubset(labels []int32, classes int, ir float64, p Profile, nmax int, seed uint64) ([]int, []int64, error) {
	byClass, err := classRows(labels, classes)
	if err != nil {
		return nil, nil, err
	}
	if nmax <= 0 {
		nmax = math.MaxInt
		for c, r := range byClass {
			if len(r) == 0 {
				return nil, nil, fmt.Errorf("class %d has no examples", c)
			}
			nmax = min(nmax, len(r))
		}
	}
	counts, err := ImbalancedCounts(nmax, classes, ir, p)
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x696d62616c616e63)) // "imbalanc"
	var rows []int
	got := make([]int64, classes)
	for c, r := range byClass {
		if counts[c] > len(r) {
			return nil, nil, fmt.Errorf("class %d needs %d examples for n_max = %d, IR = %g; it has %d", c, counts[c], nmax, ir, len(r))
		}
		perm := rng.Perm(len(r))
		for _, k := range perm[:counts[c]] {
			rows = append(rows, r[k])
		}
		got[c] = int64(counts[c])
	}
	sort.Ints(rows)
	return rows, got, nil
}

// RowSplit is a per-row split rule: whether a row goes to validation is a
// keyed hash of that row alone — its id when it has one, else its label
// and feature bytes — compared with the fraction. Adding or removing one
// row therefore moves no other row between the sides, which is what lets a
// split of private data compose in parallel (training and validation
// rows are disjoint *as a function of each row*) and lets ledger charges
// against the parent file stay valid. A shuffled, stratified split (the
// former rule) is not stable: removing one row moved thousands of others.
//
// The key is HMAC-SHA256 under a key derived from the split seed; the
// seed is public (it only makes the split reproducible). The expected
// share of each class on the validation side is the fraction; the exact
// counts vary binomially.
type RowSplit struct {
	key       [32]byte
	threshold uint64 // rows with hash < threshold go to validation
	fraction  float64
}

// NewRowSplit returns the rule for a validation fraction in (0, 1) and a
// seed.
func NewRowSplit(fraction float64, seed uint64) (*RowSplit, error) {
	if math.IsNaN(fraction) || fraction <= 0 || fraction >= 1 {
		return nil, fmt.Errorf("validation fraction must be in (0, 1), got %v", fraction)
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	s := &RowSplit{key: sha256.Sum256(append([]byte("dpfeat row split v1:"), b[:]...)), fraction: fraction}
	// fraction·2^64 rounded down: P(hash < threshold) = threshold/2^64.
	s.threshold = uint64(math.Ldexp(fraction, 64))
	return s, nil
}

// Validation reports whether the row goes to the validation side.
func (s *RowSplit) Validation(id string, label int32, feats []float32) bool {
	mac := hmac.New(sha256.New, s.key[:])
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
	return binary.BigEndian.Uint64(mac.Sum(nil)) < s.threshold
}

// ValidationSplit splits a matrix's rows into training and validation parts
// by the per-row rule of RowSplit (ids when the file has them, else each
// row's content). Both parts are in file order; either may be empty on
// small data (the rule never looks at other rows).
func ValidationSplit(m *Matrix, fraction float64, seed uint64) (train, val []int, err error) {
	s, err := NewRowSplit(fraction, seed)
	if err != nil {
		return nil, nil, err
	}
	for i := 0; i < m.Rows; i++ {
		id := ""
		if m.IDs != nil {
			id = m.IDs[i]
		}
		if s.Validation(id, m.Labels[i], m.Row(i)) {
			val = append(val, i)
		} else {
			train = append(train, i)
		}
	}
	return train, val, nil
}

// CopyRows writes the given rows (ascending) of src to a new feature file at
// path with the given metadata, streaming batch by batch.
func CopyRows(src *File, rows []int, path string, meta Metadata) error {
	if !sort.IntsAreSorted(rows) {
		return fmt.Errorf("write %s: rows must be in ascending order", path)
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
			i := int(int64(rows[k]) - b.Offset)
			out.Features = append(out.Features, b.Row(i)...)
			out.Labels = append(out.Labels, b.Labels[i])
			if b.IDs != nil {
				out.IDs = append(out.IDs, b.IDs[i])
			}
		}
		return w.Write(out)
	})
	if err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}
