package features

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

func TestImbalancedCounts(t *testing.T) {
	// CIFAR-10-LT with IR = 100 (Cui et al. 2019): 5000, 2997, 1796, 1077,
	// 645, 387, 232, 139, 83, 50.
	got, err := ImbalancedCounts(5000, 10, 100, ProfileCui)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{5000, 2997, 1796, 1077, 645, 387, 232, 139, 83, 50}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Cui profile: %v, want %v", got, want)
		}
	}
	// The DPPL code's variant: n_max · exp(−c·ln(IR)/C) = 5000 · 100^(−c/10).
	got, _ = ImbalancedCounts(5000, 10, 100, ProfileDPPL)
	want = []int{5000, 3154, 1990, 1255, 792, 500, 315, 199, 125, 79}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("DPPL profile: %v, want %v", got, want)
		}
	}
	for _, bad := range []float64{0.5, -1} {
		if _, err := ImbalancedCounts(10, 3, bad, ProfileCui); err == nil {
			t.Errorf("IR %v accepted", bad)
		}
	}
}

func mustImbalance(t *testing.T, seed uint64) *RowRule {
	r, err := NewImbalance(3, 10, ProfileCui, 1, seed)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSubsetsAndSplits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	labels := make([]int32, 3000)
	for i := range labels {
		labels[i] = int32(i % 3)
	}
	// The long-tailed subset: class c kept with probability IR^(−c/2).
	m := &Matrix{Rows: 3000, Dim: 1, Data: make([]float32, 3000), Labels: labels}
	for i := range m.Data {
		m.Data[i] = float32(i)
	}
	rule, err := NewImbalance(3, 10, ProfileCui, 1, 42)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := rule.Select(m)
	counts := [3]int{}
	for _, i := range rows {
		counts[labels[i]]++
	}
	// expected 1000, 316.2, 100 (binomial sd ≤ 15)
	if counts[0] != 1000 || math.Abs(float64(counts[1])-316.2) > 75 || math.Abs(float64(counts[2])-100) > 50 {
		t.Errorf("counts %v", counts)
	}
	other, _ := mustImbalance(t, 43).Select(m)
	again, _ := mustImbalance(t, 42).Select(m)
	if len(again) != len(rows) || len(other) == len(rows) && equalInts(other, rows) {
		t.Errorf("seeded subsets: reproducible %v, seed-dependent %v", len(again) == len(rows), !equalInts(other, rows))
	}
	// CopyRows streams the chosen rows into a new file.
	dir := t.TempDir()
	src := filepath.Join(dir, "src.arrow")
	b1, b2 := randomBatch(r, 1500, 4, 3, true), randomBatch(r, 1500, 4, 3, true)
	copy(b1.Labels, labels[:1500])
	copy(b2.Labels, labels[1500:])
	if err := WriteFile(src, testMeta("a", "b", "c"), WriterOptions{WithID: true}, b1, b2); err != nil {
		t.Fatal(err)
	}
	f, err := Open(src, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	whole, err := f.Load()
	if err != nil {
		t.Fatal(err)
	}
	rule, err = NewRowSplit(0.1, 7)
	if err != nil {
		t.Fatal(err)
	}
	val, train := rule.Select(whole)
	if len(train)+len(val) != 3000 || len(val) < 240 || len(val) > 360 {
		t.Errorf("split %d/%d, want about 2700/300", len(train), len(val))
	}
	seen := map[int]bool{}
	for _, i := range append(append([]int(nil), train...), val...) {
		if seen[i] {
			t.Fatalf("row %d in both parts", i)
		}
		seen[i] = true
	}
	meta := f.Metadata()
	meta.Subset = &Derivation{Kind: "validation-split", Part: "validation", Fraction: 0.1, Seed: 7}
	out := filepath.Join(dir, "val.arrow")
	if err := CopyRows(f, val, out, meta); err != nil {
		t.Fatal(err)
	}
	m, err = ReadAll(out, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != len(val) || m.Meta.Subset == nil || m.Meta.Subset.Part != "validation" {
		t.Fatalf("copied %d rows, subset %+v", m.Rows, m.Meta.Subset)
	}
	last, k := val[len(val)-1], len(val)-1
	if m.Labels[k] != labels[last] || m.Row(k)[3] != b2.Row(last - 1500)[3] || m.IDs[k] != b2.IDs[last-1500] {
		t.Error("copied rows differ from the source")
	}
}

// TestSplitIsPerRow is the neighbouring-dataset property the sweep's
// parallel composition and the ledger rely on: removing any one row moves
// no other row between training and validation, nor in or out of a
// long-tailed subset (the former shuffled split moved 4,696 of 30,000
// when row 0 was removed). Rows with and
// without ids, and duplicated rows, are covered.
func TestSplitIsPerRow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, withIDs := range []bool{false, true} {
		n, d := 400, 5
		m := &Matrix{Rows: n, Dim: d, Data: make([]float32, n*d), Labels: make([]int32, n)}
		for i := range m.Data {
			m.Data[i] = float32(r.NormFloat64())
		}
		for i := range m.Labels {
			m.Labels[i] = int32(r.IntN(3))
		}
		copy(m.Row(7), m.Row(3)) // a duplicate row
		m.Labels[7] = m.Labels[3]
		if withIDs {
			for i := 0; i < n; i++ {
				m.IDs = append(m.IDs, "img-"+string(rune('a'+i%26))+string(rune('a'+i/26)))
			}
		}
		split, err := NewRowSplit(0.25, 11)
		if err != nil {
			t.Fatal(err)
		}
		lt, err := NewImbalance(3, 10, ProfileDPPL, 0.8, 11)
		if err != nil {
			t.Fatal(err)
		}
		side := func(m *Matrix) []bool {
			s := make([]bool, 2*m.Rows)
			val, _ := split.Select(m)
			kept, _ := lt.Select(m)
			for _, i := range val {
				s[i] = true
			}
			for _, i := range kept {
				s[m.Rows+i] = true
			}
			return s
		}
		full := side(m)
		for drop := 0; drop < n; drop++ {
			keep := make([]int, 0, n-1)
			for i := 0; i < n; i++ {
				if i != drop {
					keep = append(keep, i)
				}
			}
			sub := &Matrix{Rows: n - 1, Dim: d, Meta: m.Meta}
			for _, i := range keep {
				sub.Data = append(sub.Data, m.Row(i)...)
				sub.Labels = append(sub.Labels, m.Labels[i])
				if withIDs {
					sub.IDs = append(sub.IDs, m.IDs[i])
				}
			}
			got := side(sub)
			for k, i := range keep {
				if got[k] != full[i] || got[n-1+k] != full[n+i] {
					t.Fatalf("ids %v: removing row %d moved row %d", withIDs, drop, i)
				}
			}
		}
		if !withIDs && full[3] != full[7] {
			t.Error("identical rows went to different sides")
		}
	}
	if _, err := NewRowSplit(1, 0); err == nil {
		t.Error("fraction 1 accepted")
	}
}
