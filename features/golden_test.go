package features

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

const goldenPath = "../testdata/features-golden.arrow"

func goldenBatch() Batch {
	return Batch{
		Dim:      3,
		Features: []float32{0.5, -1, 2, 0, 0.25, -0.125, 3, 4, 5},
		Labels:   []int32{0, Unlabeled, 1},
		IDs:      []string{"cat/0001.png", "unlabeled/0002.png", "dog/0003.png"},
	}
}

// TestGoldenLayout pins the byte layout of a feature file: what dpfeat writes
// today is byte-for-byte what was checked against the SPEC, so a change of
// layout (compression, types, metadata) cannot slip in unnoticed. Regenerate
// with `go test ./features -run Golden -update` after a deliberate change.
func TestGoldenLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.arrow")
	meta := Metadata{Version: "0.1.0", EncoderSHA256: "0123abcd", EncoderName: "golden-encoder", Classes: []string{"cat", "dog"}, Source: "golden test", Created: "2026-01-01T00:00:00Z"}
	if err := WriteFile(path, meta, WriterOptions{WithID: true}, goldenBatch()); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if *update {
		if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("feature file layout changed (%d bytes, golden %d); if deliberate, rerun with -update", len(got), len(want))
	}
}

// TestGoldenReadsAsPlainArrow reads the golden file the way pyarrow's
// ipc.open_file, polars and DuckDB do: with a generic Arrow IPC file reader,
// no dpfeat code, checking the SPEC's column names, types, nullability and
// metadata.
func TestGoldenReadsAsPlainArrow(t *testing.T) {
	data, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("ARROW1\x00\x00")) || !bytes.HasSuffix(data, []byte("ARROW1")) {
		t.Fatal("not an Arrow IPC file: magic missing")
	}
	r, err := ipc.NewFileReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := r.Schema()
	wantTypes := []struct {
		name string
		typ  arrow.DataType
	}{
		{"features", arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)},
		{"label", arrow.PrimitiveTypes.Int32},
		{"id", arrow.BinaryTypes.String},
	}
	if s.NumFields() != len(wantTypes) {
		t.Fatalf("schema has %d fields: %s", s.NumFields(), s)
	}
	for i, w := range wantTypes {
		f := s.Field(i)
		if f.Name != w.name || !arrow.TypeEqual(f.Type, w.typ) {
			t.Errorf("field %d: %s %s, want %s %s", i, f.Name, f.Type, w.name, w.typ)
		}
	}
	if s.Field(0).Nullable || !s.Field(1).Nullable {
		t.Error("features must be non-nullable and label nullable")
	}
	md := s.Metadata()
	for k, v := range map[string]string{
		"dpfeat.version": "0.1.0", "dpfeat.encoder.sha256": "0123abcd", "dpfeat.encoder.name": "golden-encoder",
		"dpfeat.classes": `["cat","dog"]`, "dpfeat.source": "golden test", "dpfeat.created": "2026-01-01T00:00:00Z",
	} {
		if i := md.FindKey(k); i < 0 || md.Values()[i] != v {
			t.Errorf("metadata %s missing or not %q", k, v)
		}
	}
	if r.NumRecords() != 1 {
		t.Fatalf("%d record batches", r.NumRecords())
	}
	rec, err := r.Record(0)
	if err != nil {
		t.Fatal(err)
	}
	feats := rec.Column(0).(*array.FixedSizeList).ListValues().(*array.Float32).Float32Values()
	want := goldenBatch()
	for i, v := range want.Features {
		if feats[i] != v {
			t.Errorf("features[%d] = %v, want %v", i, feats[i], v)
		}
	}
	labels := rec.Column(1).(*array.Int32)
	if labels.Value(0) != 0 || !labels.IsNull(1) || labels.Value(2) != 1 {
		t.Errorf("labels %v, want [0 null 1]", labels)
	}
	if ids := rec.Column(2).(*array.String); ids.Value(1) != "unlabeled/0002.png" {
		t.Errorf("ids %v", ids)
	}
}
