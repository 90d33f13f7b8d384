package features

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// multiView writes a multi-view file: n examples × k views, the views of an
// example consecutive.
func multiView(t *testing.T, path string, n, k int) Batch {
	t.Helper()
	b := Batch{Dim: 2}
	for e := 0; e < n; e++ {
		for v := 0; v < k; v++ {
			b.Features = append(b.Features, float32(e), float32(v))
			b.Labels = append(b.Labels, int32(e%2))
			b.IDs = append(b.IDs, "img"+string(rune('a'+e))+"#"+string(rune('0'+v)))
			b.Examples = append(b.Examples, "img"+string(rune('a'+e)))
		}
	}
	meta := Metadata{Classes: []string{"x", "y"}, Views: &Views{Views: k, Augment: "crop=4,flip", Seed: 3}}
	if err := WriteFile(path, meta, WriterOptions{WithID: true}, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMultiViewFiles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "mv.arrow")
	want := multiView(t, src, 40, 3)
	f, err := Open(src, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if v := f.Views(); v == nil || v.Views != 3 || v.Augment != "crop=4,flip" {
		t.Fatalf("views %+v", v)
	}
	m, err := f.Load()
	if err != nil || !slices.Equal(m.Examples, want.Examples) {
		t.Fatalf("examples read back %v, %v", m.Examples, err)
	}
	// A split keeps an example's views together, and a copy keeps the
	// examples and the views metadata.
	rule, _ := NewRowSplit(0.3, 1)
	val, train, err := rule.SelectFile(f)
	if err != nil || len(val) == 0 || len(train) == 0 {
		t.Fatalf("split %d/%d, %v", len(val), len(train), err)
	}
	side := map[string]bool{}
	for _, r := range val {
		side[want.Examples[r]] = true
	}
	for _, r := range train {
		if side[want.Examples[r]] {
			t.Fatalf("example %s has views on both sides of the split", want.Examples[r])
		}
	}
	out := filepath.Join(dir, "val.arrow")
	if err := CopyRows(f, val, out, f.Metadata()); err != nil {
		t.Fatal(err)
	}
	g, err := ReadAll(out, ReadOptions{})
	if err != nil || g.Meta.Views == nil || len(g.Examples) != len(val) || len(val)%3 != 0 {
		t.Fatalf("copy: %v views %v, %d examples for %d rows", err, g.Meta.Views, len(g.Examples), len(val))
	}
	// Only dpfeat's Arrow keeps the example: other formats are refused.
	for _, ext := range []string{".parquet", ".csv", ".npz"} {
		if err := Export(f, filepath.Join(dir, "x"+ext)); err == nil || !strings.Contains(err.Error(), "multi-view") {
			t.Errorf("export to %s: %v", ext, err)
		}
	}
	if err := Export(f, filepath.Join(dir, "copy.arrow")); err != nil {
		t.Errorf("export to .arrow: %v", err)
	}
}

func TestMultiViewFilesAreWhole(t *testing.T) {
	dir := t.TempDir()
	// Rows without their example, in a multi-view file: refused.
	meta := Metadata{Classes: []string{"x", "y"}, Views: &Views{Views: 2}}
	b := Batch{Dim: 1, Features: []float32{1, 2}, Labels: []int32{0, 1}}
	if err := WriteFile(filepath.Join(dir, "a.arrow"), meta, WriterOptions{}, b); err == nil || !strings.Contains(err.Error(), "name their example") {
		t.Errorf("multi-view rows without examples: %v", err)
	}
	b.Examples = []string{"e", ""}
	if err := WriteFile(filepath.Join(dir, "b.arrow"), meta, WriterOptions{}, b); err == nil || !strings.Contains(err.Error(), "row 1: the example id is empty") {
		t.Errorf("an empty example id: %v", err)
	}
	// An example column without the views metadata (or the reverse) is
	// not a feature file: the metadata is what makes every reader group.
	p := filepath.Join(dir, "c.arrow")
	fsl := array.NewFixedSizeListBuilder(memory.DefaultAllocator, 1, arrow.PrimitiveTypes.Float32)
	fsl.Append(true)
	fsl.ValueBuilder().(*array.Float32Builder).Append(1)
	lb := array.NewInt32Builder(memory.DefaultAllocator)
	lb.Append(0)
	writeArrowTable(t, p, "file", []arrow.Field{
		{Name: ColFeatures, Type: arrow.FixedSizeListOf(1, arrow.PrimitiveTypes.Float32)},
		{Name: ColLabel, Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: ColExample, Type: arrow.BinaryTypes.String}},
		[]arrow.Array{fsl.NewArray(), lb.NewArray(), stringsOf([]string{"e"})}, map[string]string{MetaClasses: `["x","y"]`})
	if _, err := Open(p, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "multi-view") {
		t.Errorf("an example column without %s: %v", MetaViews, err)
	}
}

// Soft labels (DP-Mix_Diff): a file with mixups with public images carries
// mix_label and mix_lambda, null in the other rows; they read back, copies
// keep them, and a row or a batch that breaks the rules is refused naming
// it.
func TestSoftLabelColumns(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "soft.arrow")
	meta := Metadata{Classes: []string{"x", "y", "z"}, Views: &Views{Views: 1, Augment: "flip", MixDiff: 1, MixWith: "pub", MixAlpha: 1}}
	b := Batch{Dim: 1, Features: []float32{1, 2, 3, 4}, Labels: []int32{0, 0, 2, 2}, Examples: []string{"a", "a", "b", "b"},
		MixLabels: []int32{Unlabeled, 1, Unlabeled, 0}, MixLambdas: []float32{0, 0.25, 0, 0.75}}
	if err := WriteFile(path, meta, WriterOptions{}, b); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Batch(0)
	if err != nil || !slices.Equal(got.MixLabels, b.MixLabels) || !slices.Equal(got.MixLambdas, b.MixLambdas) {
		t.Fatalf("read back %v %v, %v", got.MixLabels, got.MixLambdas, err)
	}
	out := filepath.Join(dir, "copy.arrow")
	if err := CopyRows(f, []int{1, 2}, out, f.Metadata()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	g, err := Open(out, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := g.Batch(0); err != nil || !slices.Equal(c.MixLabels, []int32{1, Unlabeled}) || c.MixLambdas[0] != 0.25 {
		t.Errorf("copy: %v %v, %v", c.MixLabels, c.MixLambdas, err)
	}
	g.Close()
	for _, c := range []struct {
		meta Metadata
		b    Batch
		want string
	}{
		{meta, Batch{Dim: 1, Features: []float32{1}, Labels: []int32{0}, Examples: []string{"a"}, MixLabels: []int32{3}, MixLambdas: []float32{0.5}}, "row 0: mix label or label out of range"},
		{meta, Batch{Dim: 1, Features: []float32{1}, Labels: []int32{0}, Examples: []string{"a"}, MixLabels: []int32{1}, MixLambdas: []float32{1.5}}, "mix λ 1.5"},
		{meta, Batch{Dim: 1, Features: []float32{1}, Labels: []int32{0}, Examples: []string{"a"}}, "gives every row a mix label"},
		{Metadata{Classes: meta.Classes, Views: &Views{Views: 1, Augment: "flip"}}, b, "only its rows do"},
	} {
		if err := WriteFile(filepath.Join(dir, "bad.arrow"), c.meta, WriterOptions{}, c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error with %q, got %v", c.want, err)
		}
	}
}
