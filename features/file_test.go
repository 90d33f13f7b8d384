package features

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func testMeta(classes ...string) Metadata {
	return Metadata{Version: "test", EncoderName: "enc", EncoderSHA256: "abc", Classes: classes, Source: "unit test", Created: "2026-01-01T00:00:00Z"}
}

func randomBatch(r *rand.Rand, rows, dim, classes int, withID bool) Batch {
	b := Batch{Dim: dim, Features: make([]float32, rows*dim), Labels: make([]int32, rows)}
	for i := range b.Features {
		b.Features[i] = float32(r.NormFloat64())
	}
	for i := range b.Labels {
		b.Labels[i] = int32(r.IntN(classes))
	}
	if withID {
		b.IDs = make([]string, rows)
		for i := range b.IDs {
			b.IDs[i] = "img-" + string(rune('a'+i%26))
		}
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	cases := []struct {
		name          string
		dim           int
		batches       []int
		withID, nulls bool
	}{
		{"one row", 3, []int{1}, false, false},
		{"D=1", 1, []int{10, 5}, true, false},
		{"D=4096", 4096, []int{7, 1, 9}, false, false},
		{"unlabeled rows", 16, []int{50}, true, true},
		{"many batches", 8, []int{3, 3, 3, 3, 3, 3, 3}, false, false},
	}
	for _, c := range cases {
		for _, noMmap := range []bool{false, true} {
			t.Run(c.name, func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				r := rand.New(rand.NewPCG(1, 2))
				path := filepath.Join(t.TempDir(), "f.arrow")
				w, err := Create(path, c.dim, testMeta("a", "b", "c"), WriterOptions{WithID: c.withID, Allocator: mem})
				if err != nil {
					t.Fatal(err)
				}
				var want []Batch
				for _, n := range c.batches {
					b := randomBatch(r, n, c.dim, 3, c.withID)
					if c.nulls {
						for i := 0; i < n; i += 3 {
							b.Labels[i] = Unlabeled
						}
					}
					if err := w.Write(b); err != nil {
						t.Fatal(err)
					}
					want = append(want, b)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				mem.AssertSize(t, 0)
				assertNoTemp(t, filepath.Dir(path))

				f, err := Open(path, ReadOptions{NoMmap: noMmap})
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if f.Dim() != c.dim || f.NumBatches() != len(c.batches) || f.HasIDs() != c.withID {
					t.Fatalf("dim %d batches %d ids %v", f.Dim(), f.NumBatches(), f.HasIDs())
				}
				md := f.Metadata()
				if md.EncoderName != "enc" || len(md.Classes) != 3 || md.Classes[2] != "c" || md.Created == "" {
					t.Errorf("metadata %+v", md)
				}
				var total int64
				for i, wb := range want {
					got, err := f.Batch(i)
					if err != nil {
						t.Fatal(err)
					}
					if got.Offset != total {
						t.Errorf("batch %d offset %d, want %d", i, got.Offset, total)
					}
					total += int64(wb.Rows())
					equalBatch(t, got, wb)
				}
				if f.Rows() != total {
					t.Errorf("rows %d, want %d", f.Rows(), total)
				}
				m, err := f.Load()
				if err != nil {
					t.Fatal(err)
				}
				if m.Rows != int(total) || len(m.Data) != int(total)*c.dim {
					t.Errorf("Load: %d rows, %d values", m.Rows, len(m.Data))
				}
				last := want[len(want)-1]
				if got := m.Row(m.Rows - 1); got[c.dim-1] != last.Features[len(last.Features)-1] {
					t.Error("Load: last value differs")
				}
			})
		}
	}
}

func equalBatch(t *testing.T, got, want Batch) {
	t.Helper()
	if got.Rows() != want.Rows() || len(got.Features) != len(want.Features) {
		t.Fatalf("rows %d/%d, values %d/%d", got.Rows(), want.Rows(), len(got.Features), len(want.Features))
	}
	for i := range want.Features {
		if got.Features[i] != want.Features[i] {
			t.Fatalf("value %d: %v, want %v", i, got.Features[i], want.Features[i])
		}
	}
	for i := range want.Labels {
		if got.Labels[i] != want.Labels[i] {
			t.Fatalf("label %d: %v, want %v", i, got.Labels[i], want.Labels[i])
		}
	}
	for i := range want.IDs {
		if got.IDs[i] != want.IDs[i] {
			t.Fatalf("id %d: %q, want %q", i, got.IDs[i], want.IDs[i])
		}
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestZeroRowsIsAnError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "empty.arrow")
	w, err := Create(path, 4, testMeta("a"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "no rows") {
		t.Fatalf("Close of an empty file: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("an empty feature file was written")
	}
	assertNoTemp(t, dir)

	// A 0-row file written by another tool is refused on reading.
	raw := filepath.Join(dir, "raw.arrow")
	writeRaw(t, raw, schema(4, false, testMeta("a")), nil)
	if _, err := Open(raw, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "no rows") {
		t.Errorf("Open of a 0-row file: %v", err)
	}
}

func TestFailedWriteKeepsExistingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "good.arrow")
	good := randomBatch(rand.New(rand.NewPCG(3, 4)), 5, 4, 2, false)
	if err := WriteFile(path, testMeta("a", "b"), WriterOptions{}, good); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)

	bad := randomBatch(rand.New(rand.NewPCG(5, 6)), 5, 4, 2, false)
	bad.Features[7] = float32(math.NaN())
	err := WriteFile(path, testMeta("a", "b"), WriterOptions{}, good, bad)
	if err == nil || !strings.Contains(err.Error(), "row 6") || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("writing a NaN: %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("a failed write changed the existing file")
	}
	assertNoTemp(t, dir)
}

func TestWriterRefusesBadBatches(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	cases := []struct {
		name  string
		batch func() Batch
		want  string
	}{
		{"wrong width", func() Batch { b := randomBatch(r, 3, 5, 2, false); return b }, "dimension 5, file has 4"},
		{"short values", func() Batch { b := randomBatch(r, 3, 4, 2, false); b.Features = b.Features[:10]; return b }, "expected 12"},
		{"Inf", func() Batch { b := randomBatch(r, 3, 4, 2, false); b.Features[5] = float32(math.Inf(1)); return b }, "row 1: feature 1 is +Inf"},
		{"label too large", func() Batch { b := randomBatch(r, 3, 4, 2, false); b.Labels[2] = 2; return b }, "row 2: label out of range"},
		{"label negative", func() Batch { b := randomBatch(r, 3, 4, 2, false); b.Labels[0] = -5; return b }, "row 0: label out of range"},
		{"ids without column", func() Batch { return randomBatch(r, 3, 4, 2, true) }, "without an id column"},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "f.arrow")
		w, err := Create(path, 4, testMeta("a", "b"), WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		err = w.Write(c.batch())
		w.Abort()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v; want it to name the file and say %q", c.name, err, c.want)
		}
	}
}

// writeRaw writes an Arrow IPC file with arbitrary columns, as another tool
// might.
func writeRaw(t *testing.T, path string, s *arrow.Schema, cols []arrow.Array) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(s))
	if err != nil {
		t.Fatal(err)
	}
	if cols != nil {
		rec := array.NewRecordBatch(s, cols, int64(cols[0].Len()))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestReaderRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	mem := memory.NewGoAllocator()
	good := filepath.Join(dir, "good.arrow")
	if err := WriteFile(good, testMeta("a", "b"), WriterOptions{}, randomBatch(rand.New(rand.NewPCG(9, 9)), 20, 4, 2, false)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(good)

	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f32 := func(vals ...float32) arrow.Array {
		b := array.NewFloat32Builder(mem)
		b.AppendValues(vals, nil)
		return b.NewArray()
	}
	i32 := func(vals ...int32) arrow.Array {
		b := array.NewInt32Builder(mem)
		b.AppendValues(vals, nil)
		return b.NewArray()
	}
	fsl := func(dim int32, vals arrow.Array) arrow.Array {
		d := array.NewData(arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), vals.Len()/int(dim), []*memory.Buffer{nil}, []arrow.ArrayData{vals.Data()}, 0, 0)
		return array.MakeFromData(d)
	}
	raw := func(name string, fields []arrow.Field, md map[string]string, cols ...arrow.Array) string {
		p := filepath.Join(dir, name)
		m := arrow.MetadataFrom(md)
		writeRaw(t, p, arrow.NewSchema(fields, &m), cols)
		return p
	}
	featField := arrow.Field{Name: "features", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)}
	labelField := arrow.Field{Name: "label", Type: arrow.PrimitiveTypes.Int32, Nullable: true}
	classes := map[string]string{MetaClasses: `["a","b"]`}

	cases := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope.arrow"), "no such file"},
		{"empty", write("empty.arrow", nil), "the file is empty"},
		{"short", write("short.arrow", []byte("ARROW1\x00\x00")), "too short"},
		{"text", write("text.arrow", []byte(strings.Repeat("hello world ", 20))), "not an Arrow IPC file"},
		{"truncated", write("trunc.arrow", data[:len(data)/2]), "truncated"},
		{"corrupt footer", write("corrupt.arrow", corruptMiddle(data, len(data)-40, 24)), "read "},
		{"no features", raw("nofeat.arrow", []arrow.Field{labelField}, classes, i32(0, 1)), `no features column`},
		{"label out of range", raw("range.arrow", []arrow.Field{featField, labelField}, classes, fsl(2, f32(1, 2, 3, 4)), i32(0, 2)), "row 1: label out of range"},
		{"label negative", raw("neg.arrow", []arrow.Field{featField, labelField}, classes, fsl(2, f32(1, 2, 3, 4)), i32(-3, 0)), "row 0: the label is negative"},
		{"NaN feature", raw("nan.arrow", []arrow.Field{featField, labelField}, classes, fsl(2, f32(1, 2, float32(math.NaN()), 4)), i32(0, 1)), "row 1: feature 0 is NaN"},
		{"bad classes", raw("cls.arrow", []arrow.Field{featField, labelField}, map[string]string{MetaClasses: "a,b"}, fsl(2, f32(1, 2, 3, 4)), i32(0, 1)), "not a JSON array"},
	}
	for _, c := range cases {
		err := func() error {
			f, err := Open(c.path, ReadOptions{})
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Load()
			return err
		}()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: error %v; want it to name %s and say %q", c.name, err, c.path, c.want)
		}
	}
}

func corruptMiddle(data []byte, at, n int) []byte {
	out := append([]byte(nil), data...)
	for i := at; i < at+n && i < len(out)-6; i++ {
		out[i] ^= 0xA5
	}
	return out
}

// TestEachReleasesPagesKeepsData checks that a streaming pass, which drops
// each mapped batch's pages from the resident set after use, leaves every
// batch slice readable with its contents, in the same pass and afterwards.
func TestEachReleasesPagesKeepsData(t *testing.T) {
	const dim = 2048 // 8 KiB rows: every batch spans whole pages
	r := rand.New(rand.NewPCG(3, 4))
	path := filepath.Join(t.TempDir(), "f.arrow")
	w, err := Create(path, dim, testMeta("a", "b"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []Batch
	for i := 0; i < 5; i++ {
		b := randomBatch(r, 4+i, dim, 2, false)
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		want = append(want, b)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	defer func(v int) { releaseAbove = v }(releaseAbove)
	releaseAbove = 0 // as for a file of gigabytes
	var kept [][]float32
	for pass := 0; pass < 2; pass++ {
		kept = kept[:0]
		if err := f.Each(func(b Batch) error {
			kept = append(kept, b.Features)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for i, got := range kept {
			for j, v := range want[i].Features {
				if got[j] != v {
					t.Fatalf("pass %d batch %d value %d: %v after release, want %v", pass, i, j, got[j], v)
				}
			}
		}
	}
}

// TestFirstNonFiniteParallel: the parallel scan of a large batch finds the
// first non-finite value, whichever part it is in.
func TestFirstNonFiniteParallel(t *testing.T) {
	v := make([]float32, 3<<20)
	if j := FirstNonFinite(v); j != -1 {
		t.Fatalf("all finite: %d", j)
	}
	for _, pos := range [][]int{{5}, {len(v) - 1}, {len(v) / 2, len(v) - 3}, {len(v)/3 + 1, 17}} {
		w := make([]float32, len(v))
		for k, p := range pos {
			w[p] = float32([]float64{math.NaN(), math.Inf(1)}[k%2])
		}
		want := slices.Min(pos)
		if j := FirstNonFinite(w); j != want {
			t.Errorf("non-finite at %v: found %d, want %d", pos, j, want)
		}
	}
}

// TestOpenReadsRecordBatchesOverArrowsDefault: pyarrow and polars write a
// table as one record batch, often over the Arrow library's default 256
// MiB limit; such a file was called corrupt. The bound is the file.
func TestOpenReadsRecordBatchesOverArrowsDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 270 MB")
	}
	const n, d = 65800, 1024 // 269.5 MB of features in one batch
	path := filepath.Join(t.TempDir(), "big.arrow")
	w, err := Create(path, d, Metadata{Classes: []string{"a", "b"}}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := Batch{Dim: d, Features: make([]float32, n*d), Labels: make([]int32, n)}
	for i := range b.Labels {
		b.Labels[i] = int32(i % 2)
		b.Features[i*d+i%d] = 1
	}
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b = Batch{}
	f, err := Open(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := 0
	if err := f.Each(func(b Batch) error { rows += b.Rows(); return nil }); err != nil {
		t.Fatal(err)
	}
	if rows != n || f.NumBatches() != 1 {
		t.Fatalf("read %d rows in %d batches; want %d in 1", rows, f.NumBatches(), n)
	}
}
