package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dpfeat/dpfeat/features"
)

// featureFile writes a labelled feature file with rows·dim values.
func featureFile(t *testing.T, path string, rows, dim int, classes []string) {
	t.Helper()
	b := features.Batch{Dim: dim, Features: make([]float32, rows*dim), Labels: make([]int32, rows), IDs: make([]string, rows)}
	for i := range b.Features {
		b.Features[i] = float32(i%7) - 3
	}
	for i := range b.Labels {
		b.Labels[i] = int32(i % len(classes))
		b.IDs[i] = fmt.Sprintf("row%d", i)
	}
	if err := features.WriteFile(path, features.Metadata{Classes: classes, Source: "test", EncoderName: "enc"}, features.WriterOptions{WithID: true}, b); err != nil {
		t.Fatal(err)
	}
}

func TestInspect(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.arrow")
	featureFile(t, path, 30, 4, []string{"a", "b", "c"})
	code, out, errs := run(t, "inspect", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range []string{"rows:        30", "dimension:   4", "a 10", "NaN/Inf:     none", "dpfeat.source = test"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(w), " ")) {
			t.Errorf("inspect output lacks %q:\n%s", w, out)
		}
	}
	code, out, _ = run(t, "inspect", "--json", path)
	var s features.Summary
	if err := json.Unmarshal([]byte(out), &s); code != 0 || err != nil {
		t.Fatalf("inspect --json: exit %d, %v\n%s", code, err, out)
	}
	if s.Rows != 30 || s.Dim != 4 || s.Counts[2] != 10 || len(s.NormQuantiles) != len(s.NormLevels) || s.NormQuantiles[0] > s.NormQuantiles[8] {
		t.Errorf("summary %+v", s)
	}

	// A file with NaN values (written by another tool): inspect counts them.
	nan := filepath.Join(dir, "nan.arrow")
	writeNaNFile(t, nan)
	code, out, errs = run(t, "inspect", "--json", nan)
	if code != 0 {
		t.Fatalf("inspect of a NaN file: exit %d: %s", code, errs)
	}
	json.Unmarshal([]byte(out), &s)
	if s.NonFinite != 2 || s.NonFiniteRows != 1 {
		t.Errorf("NaN counts: %d values in %d rows", s.NonFinite, s.NonFiniteRows)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect"}, "exactly one feature file"},
		{[]string{"inspect", filepath.Join(dir, "missing.arrow")}, "missing.arrow"},
		{[]string{"inspect", writeText(t, dir)}, "not an Arrow IPC file"},
	} {
		code, _, errs := run(t, c.args...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want 1 and %q", c.args, code, errs, c.want)
		}
	}
}

func writeText(t *testing.T, dir string) string {
	p := filepath.Join(dir, "notes.arrow")
	os.WriteFile(p, []byte(strings.Repeat("plain text, not arrow ", 10)), 0o644)
	return p
}

func writeNaNFile(t *testing.T, path string) {
	mem := memory.NewGoAllocator()
	vb := array.NewFloat32Builder(mem)
	vb.AppendValues([]float32{1, 2, float32(math.NaN()), float32(math.Inf(1)), 5, 6}, nil)
	vals := vb.NewArray()
	fsl := array.MakeFromData(array.NewData(arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), 3, []*memory.Buffer{nil}, []arrow.ArrayData{vals.Data()}, 0, 0))
	lb := array.NewInt32Builder(mem)
	lb.AppendValues([]int32{0, 1, 0}, nil)
	md := arrow.NewMetadata([]string{features.MetaClasses}, []string{`["x","y"]`})
	s := arrow.NewSchema([]arrow.Field{{Name: "features", Type: fsl.DataType()}, {Name: "label", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, &md)
	rec := array.NewRecordBatch(s, []arrow.Array{fsl, lb.NewArray()}, 3)
	f, _ := os.Create(path)
	w, _ := ipc.NewFileWriter(f, ipc.WithSchema(s))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f.Close()
}

func TestSplitAndImbalance(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.arrow")
	featureFile(t, in, 300, 3, []string{"a", "b", "c"})
	tr, va := filepath.Join(dir, "tr.arrow"), filepath.Join(dir, "va.arrow")
	code, _, errs := run(t, "split", "--in", in, "--val-fraction", "0.2", "--train", tr, "--val", va, "--key", "3")
	if code != 0 {
		t.Fatalf("split: exit %d: %s", code, errs)
	}
	m, err := features.ReadAll(va, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows < 40 || m.Rows > 80 || m.Meta.Subset == nil || m.Meta.Subset.Part != "validation" || m.Meta.Subset.Seed != 3 || m.Meta.EncoderName != "enc" {
		t.Errorf("validation file: %d rows, metadata %+v", m.Rows, m.Meta)
	}
	lt := filepath.Join(dir, "lt.arrow")
	code, out, errs := run(t, "imbalance", "--in", in, "--ratio", "10", "--out", lt, "--json")
	if code != 0 {
		t.Fatalf("imbalance: exit %d: %s", code, errs)
	}
	var res struct {
		Rows   int     `json:"rows"`
		Counts []int64 `json:"class_counts"`
	}
	json.Unmarshal([]byte(out), &res)
	// 100 rows a class kept with probability 1, 10^(−1/2), 1/10: class 0
	// whole, the others binomial.
	if res.Counts[0] != 100 || res.Counts[1] < 15 || res.Counts[1] > 50 || res.Counts[2] > 25 || res.Rows != int(res.Counts[0]+res.Counts[1]+res.Counts[2]) {
		t.Errorf("imbalanced subset: %+v", res)
	}
	// Bad values are refused before the outputs are looked at; existing
	// outputs need --force.
	tr, va, lt = filepath.Join(dir, "new-tr.arrow"), filepath.Join(dir, "new-va.arrow"), filepath.Join(dir, "new-lt.arrow")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"split", "--in", in, "--train", tr}, "--val is required"},
		{[]string{"split", "--in", in, "--train", in, "--val", va}, "is the same file as --in"},
		{[]string{"split", "--in", in, "--train", va, "--val", va}, "name the same file"},
		{[]string{"split", "--in", in, "--train", tr, "--val", va, "--val-fraction", "1.5"}, "--val-fraction: validation fraction must be in (0, 1)"},
		{[]string{"imbalance", "--in", in, "--out", lt, "--ratio", "0.5"}, "--ratio must be ≥ 1"},
		{[]string{"imbalance", "--in", in, "--out", lt, "--ratio", "2", "--profile", "zipf"}, "--profile must be cui or dppl"},
		{[]string{"imbalance", "--in", in, "--out", lt, "--ratio", "2", "--rate", "1.5"}, "keep rate must be in (0, 1]"},
	} {
		code, _, errs := run(t, c.args...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want 1 and %q", c.args, code, errs, c.want)
		}
	}
}
