package features

import (
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

// ValidationSplit splits rows into training and validation parts, per class
// (stratified), at random from the seed: round(fraction·n_c) rows of each
// class go to validation, at least one where the class has two or more rows
// and fraction > 0. Unlabeled rows are split the same way, as one group.
// Both parts are returned in file order.
func ValidationSplit(labels []int32, classes int, fraction float64, seed uint64) (train, val []int, err error) {
	if math.IsNaN(fraction) || fraction <= 0 || fraction >= 1 {
		return nil, nil, fmt.Errorf("validation fraction must be in (0, 1), got %v", fraction)
	}
	byClass, err := classRows(labels, classes)
	if err != nil {
		return nil, nil, err
	}
	var unl []int
	for i, l := range labels {
		if l == Unlabeled {
			unl = append(unl, i)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x76616c6964617465)) // "validate"
	for _, r := range append(byClass, unl) {
		k := int(math.Round(fraction * float64(len(r))))
		if k == 0 && len(r) >= 2 {
			k = 1
		}
		if k >= len(r) && len(r) > 0 {
			k = len(r) - 1
		}
		perm := rng.Perm(len(r))
		for j, p := range perm {
			if j < k {
				val = append(val, r[p])
			} else {
				train = append(train, r[p])
			}
		}
	}
	sort.Ints(train)
	sort.Ints(val)
	if len(val) == 0 || len(train) == 0 {
		return nil, nil, fmt.Errorf("a %g validation split of %d rows leaves one side empty", fraction, len(labels))
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
