//go:build cgo

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/orttest"
)

// hubParquet writes the images of an image folder as a Hugging Face Hub
// Parquet shard: image struct<bytes, path>, label int64, the ClassLabel
// names in the file's "huggingface" metadata (as the Hub stores them).
func hubParquet(t *testing.T, folder string, classes []string, out string) {
	hubParquetPaths(t, folder, classes, out, true)
}

// hubParquetPaths is hubParquet, with the images' paths or without (null,
// as datasets built from arrays have them: rows known only by position).
func hubParquetPaths(t *testing.T, folder string, classes []string, out string, paths bool) {
	t.Helper()
	imgType := arrow.StructOf(arrow.Field{Name: "bytes", Type: arrow.BinaryTypes.Binary, Nullable: true},
		arrow.Field{Name: "path", Type: arrow.BinaryTypes.String, Nullable: true})
	ib := array.NewStructBuilder(memory.DefaultAllocator, imgType)
	lb := array.NewInt64Builder(memory.DefaultAllocator)
	for ci, c := range classes {
		files, _ := filepath.Glob(filepath.Join(folder, c, "*.png"))
		slices.Sort(files)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ib.Append(true)
			ib.FieldBuilder(0).(*array.BinaryBuilder).Append(b)
			if paths {
				ib.FieldBuilder(1).(*array.StringBuilder).Append(c + "/" + filepath.Base(f))
			} else {
				ib.FieldBuilder(1).(*array.StringBuilder).AppendNull()
			}
			lb.Append(int64(ci))
		}
	}
	hf, _ := json.Marshal(map[string]any{"info": map[string]any{"features": map[string]any{
		"image": map[string]any{"_type": "Image"}, "label": map[string]any{"_type": "ClassLabel", "names": classes}}}})
	md := arrow.NewMetadata([]string{"huggingface"}, []string{string(hf)})
	s := arrow.NewSchema([]arrow.Field{{Name: "image", Type: imgType, Nullable: true}, {Name: "label", Type: arrow.PrimitiveTypes.Int64}}, &md)
	rec := array.NewRecordBatch(s, []arrow.Array{ib.NewArray(), lb.NewArray()}, int64(lb.Len()))
	defer rec.Release()
	tbl := array.NewTableFromRecords(s, []arrow.RecordBatch{rec})
	defer tbl.Release()
	os.MkdirAll(filepath.Dir(out), 0o755)
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pqarrow.WriteTable(tbl, f, 4, nil, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())); err != nil {
		t.Fatal(err)
	}
}

// A Hub Parquet dataset gives the same features as the image folder it
// came from; a repository with several splits asks for one (#20).
func TestExtractReadsHubParquet(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	classes := []string{"cat", "dog"}
	folder := filepath.Join(dir, "images")
	imageFolder(t, folder, classes, 5)
	repo := filepath.Join(dir, "repo")
	hubParquet(t, folder, classes, filepath.Join(repo, "data", "train-00000-of-00001.parquet"))
	hubParquet(t, folder, classes, filepath.Join(repo, "data", "test-00000-of-00001.parquet"))
	model := "../testdata/encoders/tiny-cnn.onnx"
	want := filepath.Join(dir, "folder.arrow")
	if code, _, errs := run(t, "extract", "--encoder", model, "--data", folder, "--out", want, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	code, _, errs := run(t, "extract", "--encoder", model, "--data", repo, "--out", filepath.Join(dir, "x.arrow"), "--quiet")
	if code != 1 || !strings.Contains(errs, "shards of splits test, train; pass --split") {
		t.Fatalf("no --split: exit %d, %q", code, errs)
	}
	for _, src := range []string{repo, filepath.Join(repo, "data", "train-00000-of-00001.parquet")} {
		got := filepath.Join(dir, "hub.arrow")
		os.Remove(got)
		if code, _, errs := run(t, "extract", "--encoder", model, "--data", src, "--split", "train", "--out", got, "--quiet"); code != 0 {
			t.Fatal(errs)
		}
		a, _ := features.ReadAll(want, features.ReadOptions{})
		b, err := features.ReadAll(got, features.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Data, b.Data) || !slices.Equal(a.Labels, b.Labels) || !slices.Equal(a.IDs, b.IDs) || !slices.Equal(a.Meta.Classes, b.Meta.Classes) {
			t.Errorf("%s: features, labels, ids or classes differ from the image folder's:\n%v\n%v", src, a.IDs, b.IDs)
		}
		if !strings.Contains(b.Meta.Source, "Hugging Face Parquet") {
			t.Errorf("source %q", b.Meta.Source)
		}
	}
}
