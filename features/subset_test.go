package features

import (
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

func TestSubsetsAndSplits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	labels := make([]int32, 3000)
	for i := range labels {
		labels[i] = int32(i % 3)
	}
	rows, counts, err := ImbalancedSubset(labels, 3, 10, ProfileCui, 0, 42)
	if err != nil {
		t.Fatal(err)
	}
	if counts[0] != 1000 || counts[1] != 316 || counts[2] != 100 || len(rows) != 1416 {
		t.Errorf("counts %v, %d rows", counts, len(rows))
	}
	again, _, _ := ImbalancedSubset(labels, 3, 10, ProfileCui, 0, 42)
	other, _, _ := ImbalancedSubset(labels, 3, 10, ProfileCui, 0, 43)
	same, diff := true, false
	for i := range rows {
		same = same && rows[i] == again[i]
		diff = diff || rows[i] != other[i]
	}
	if !same || !diff {
		t.Errorf("seeded subsets: reproducible %v, seed-dependent %v", same, diff)
	}

	train, val, err := ValidationSplit(labels, 3, 0.1, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(val) != 300 || len(train) != 2700 {
		t.Errorf("split %d/%d", len(train), len(val))
	}
	perClass := [3]int{}
	for _, i := range val {
		perClass[labels[i]]++
	}
	if perClass != [3]int{100, 100, 100} {
		t.Errorf("split is not stratified: %v", perClass)
	}
	seen := map[int]bool{}
	for _, i := range append(append([]int(nil), train...), val...) {
		if seen[i] {
			t.Fatalf("row %d in both parts", i)
		}
		seen[i] = true
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
	meta := f.Metadata()
	meta.Subset = &Derivation{Kind: "validation-split", Part: "validation", Fraction: 0.1, Seed: 7}
	out := filepath.Join(dir, "val.arrow")
	if err := CopyRows(f, val, out, meta); err != nil {
		t.Fatal(err)
	}
	m, err := ReadAll(out, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != 300 || m.Meta.Subset == nil || m.Meta.Subset.Part != "validation" {
		t.Fatalf("copied %d rows, subset %+v", m.Rows, m.Meta.Subset)
	}
	last := val[len(val)-1]
	if m.Labels[299] != labels[last] || m.Row(299)[3] != b2.Row(last - 1500)[3] || m.IDs[299] != b2.IDs[last-1500] {
		t.Error("copied rows differ from the source")
	}
}
