package features

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// The reference table of the foreign-format tests (and of
// testdata/foreign, made by testdata/gen/make_foreign.py).
var (
	refX = [][]float64{{0.5, -1.25, 2.0}, {1.0, 0.0, -0.5}, {0.25, 0.75, 1.5},
		{-2.0, 1.0, 0.125}, {3.0, -0.25, 0.5}, {0.0, 2.5, -1.0}}
	refY     = []int32{2, 0, 1, 0, 2, 1}
	refNames = []string{"bird", "cat", "dog"}
	refIDs   = []string{"img0", "img1", "img2", "img3", "img4", "img5"}
)

func refFeatures() []float32 {
	var out []float32
	for _, r := range refX {
		for _, v := range r {
			out = append(out, float32(v))
		}
	}
	return out
}

// writeArrowTable writes columns as one record batch, as an IPC file or
// (stream) an IPC stream, or as Parquet.
func writeArrowTable(t *testing.T, path, kind string, fields []arrow.Field, cols []arrow.Array, md map[string]string) {
	t.Helper()
	var meta *arrow.Metadata
	if md != nil {
		m := arrow.MetadataFrom(md)
		meta = &m
	}
	s := arrow.NewSchema(fields, meta)
	rec := array.NewRecordBatch(s, cols, int64(cols[0].Len()))
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	switch kind {
	case "file":
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(s))
		if err == nil {
			err = w.Write(rec)
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	case "stream":
		w := ipc.NewWriter(f, ipc.WithSchema(s))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	case "parquet":
		tbl := array.NewTableFromRecords(s, []arrow.RecordBatch{rec})
		defer tbl.Release()
		if err := pqarrow.WriteTable(tbl, f, 4, nil, pqarrow.DefaultWriterProps()); err != nil {
			t.Fatal(err)
		}
	}
}

func listOf(elem arrow.DataType, rows [][]float64) arrow.Array {
	b := array.NewListBuilder(memory.DefaultAllocator, elem)
	defer b.Release()
	for _, r := range rows {
		b.Append(true)
		switch vb := b.ValueBuilder().(type) {
		case *array.Float64Builder:
			vb.AppendValues(r, nil)
		case *array.Float32Builder:
			for _, v := range r {
				vb.Append(float32(v))
			}
		}
	}
	return b.NewArray()
}

func fixedOf(rows [][]float64) arrow.Array {
	b := array.NewFixedSizeListBuilder(memory.DefaultAllocator, int32(len(rows[0])), arrow.PrimitiveTypes.Float32)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float32Builder)
	for _, r := range rows {
		b.Append(true)
		for _, v := range r {
			vb.Append(float32(v))
		}
	}
	return b.NewArray()
}

func int64s(v []int32) arrow.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for _, x := range v {
		b.Append(int64(x))
	}
	return b.NewArray()
}

func stringsOf(v []string) arrow.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(v, nil)
	return b.NewArray()
}

func column(j int) arrow.Array {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	defer b.Release()
	for _, r := range refX {
		b.Append(r[j])
	}
	return b.NewArray()
}

func namesOf(y []int32) []string {
	var out []string
	for _, l := range y {
		out = append(out, refNames[l])
	}
	return out
}

func csvText(header bool, comma string, label func(i int) string) string {
	var b strings.Builder
	if header {
		b.WriteString(strings.Join([]string{"id", "a", "b", "c", "label"}, comma) + "\n")
	}
	for i, r := range refX {
		cells := []string{}
		if header {
			cells = append(cells, refIDs[i])
		}
		for _, v := range r {
			cells = append(cells, formatFloat(float32(v)))
		}
		cells = append(cells, label(i))
		b.WriteString(strings.Join(cells, comma) + "\n")
	}
	return b.String()
}

func writeText(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpenReadsForeignFormats(t *testing.T) {
	nums := []string{"0", "1", "2"}
	hf, _ := json.Marshal(map[string]any{"info": map[string]any{"features": map[string]any{
		"label": map[string]any{"_type": "ClassLabel", "names": refNames}}}})
	cases := []struct {
		name    string
		make    func(t *testing.T, dir string) string
		opt     ImportOptions
		format  string
		classes []string
		derived bool
		ids     bool
	}{
		{name: "numpy savez_compressed, float64, str labels, ids",
			make:   func(t *testing.T, dir string) string { return "../testdata/foreign/compressed.npz" },
			format: FormatNPZ, classes: refNames, derived: true, ids: true},
		{name: "npz with a classes array and int64 labels",
			make:   func(t *testing.T, dir string) string { return "../testdata/foreign/classes.npz" },
			format: FormatNPZ, classes: refNames},
		{name: "Fortran-order float64 .npy, int16 labels .npy",
			make: func(t *testing.T, dir string) string { return "../testdata/foreign/fortran-f8.npy" },
			opt:  ImportOptions{Labels: "../testdata/foreign/labels-i2.npy"}, format: FormatNPY, classes: nums, derived: true},
		{name: "big-endian float32 .npy, text labels, --classes in another order",
			make: func(t *testing.T, dir string) string {
				writeText(t, filepath.Join(dir, "y.txt"), strings.Join(namesOf(refY), "\n")+"\n")
				return "../testdata/foreign/big-endian-f4.npy"
			},
			opt: ImportOptions{Classes: refNames, Labels: "y.txt"}, format: FormatNPY, classes: refNames},
		{name: "Arrow file from another writer: list<double>, int64 target, ids",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.arrow")
				writeArrowTable(t, p, "file", []arrow.Field{
					{Name: "embedding", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
					{Name: "target", Type: arrow.PrimitiveTypes.Int64},
					{Name: "id", Type: arrow.BinaryTypes.String}},
					[]arrow.Array{listOf(arrow.PrimitiveTypes.Float64, refX), int64s(refY), stringsOf(refIDs)}, nil)
				return p
			},
			format: FormatArrowFile, classes: nums, derived: true, ids: true},
		{name: "dpfeat's schema without dpfeat.classes",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.arrow")
				lb := array.NewInt32Builder(memory.DefaultAllocator)
				lb.AppendValues(refY, nil)
				writeArrowTable(t, p, "file", []arrow.Field{
					{Name: "features", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)},
					{Name: "label", Type: arrow.PrimitiveTypes.Int32, Nullable: true}},
					[]arrow.Array{fixedOf(refX), lb.NewArray()}, nil)
				return p
			},
			format: FormatArrowFile, classes: nums, derived: true},
		{name: "Arrow file and stream, dictionary-encoded string labels (pandas' category; #35 item 10)",
			make: func(t *testing.T, dir string) string {
				dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
				idx := array.NewInt8Builder(memory.DefaultAllocator)
				for _, y := range refY {
					idx.Append(int8(y))
				}
				dict := array.NewDictionaryArray(dt, idx.NewArray(), stringsOf(refNames))
				for _, kind := range []string{"stream", "file"} {
					writeArrowTable(t, filepath.Join(dir, "x-"+kind+".arrow"), kind, []arrow.Field{
						{Name: "features", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)},
						{Name: "label", Type: dt}},
						[]arrow.Array{fixedOf(refX), dict}, nil)
				}
				f, err := Open(filepath.Join(dir, "x-stream.arrow"), ReadOptions{})
				if err != nil {
					t.Fatalf("the stream: %v", err)
				}
				f.Close()
				return filepath.Join(dir, "x-file.arrow")
			},
			format: FormatArrowFile, classes: refNames, derived: true},
		{name: "Arrow stream, string labels, --classes",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.arrows")
				writeArrowTable(t, p, "stream", []arrow.Field{
					{Name: "features", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)},
					{Name: "y", Type: arrow.BinaryTypes.String}},
					[]arrow.Array{fixedOf(refX), stringsOf(namesOf(refY))}, nil)
				return p
			},
			opt: ImportOptions{Classes: refNames}, format: FormatArrowStream, classes: refNames},
		{name: "Parquet, one column per dimension, Hugging Face ClassLabel",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.parquet")
				writeArrowTable(t, p, "parquet", []arrow.Field{
					{Name: "a", Type: arrow.PrimitiveTypes.Float64}, {Name: "b", Type: arrow.PrimitiveTypes.Float64},
					{Name: "c", Type: arrow.PrimitiveTypes.Float64}, {Name: "label", Type: arrow.PrimitiveTypes.Int64}},
					[]arrow.Array{column(0), column(1), column(2), int64s(refY)}, map[string]string{"huggingface": string(hf)})
				return p
			},
			format: FormatParquet, classes: refNames},
		{name: "Parquet, list<float>, string labels, several row groups",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.parquet")
				writeArrowTable(t, p, "parquet", []arrow.Field{
					{Name: "emb", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
					{Name: "labels", Type: arrow.BinaryTypes.String}},
					[]arrow.Array{listOf(arrow.PrimitiveTypes.Float32, refX), stringsOf(namesOf(refY))}, nil)
				return p
			},
			format: FormatParquet, classes: refNames, derived: true},
		{name: "CSV with a header, names, ids",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.csv")
				writeText(t, p, csvText(true, ",", func(i int) string { return refNames[refY[i]] }))
				return p
			},
			format: FormatCSV, classes: refNames, derived: true, ids: true},
		{name: "Excel's CSV UTF-8: a byte-order mark before the first column's name (#35 item 9)",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.csv")
				writeText(t, p, "\ufeff"+csvText(true, ",", func(i int) string { return refNames[refY[i]] }))
				return p
			},
			format: FormatCSV, classes: refNames, derived: true, ids: true},
		{name: "TSV, integer labels indexing --classes",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.tsv")
				writeText(t, p, csvText(true, "\t", func(i int) string { return []string{"2", "0", "1", "0", "2", "1"}[i] }))
				return p
			},
			opt: ImportOptions{Classes: refNames}, format: FormatCSV, classes: refNames, ids: true},
		{name: "CSV without a header, savetxt's float labels, --label-column 3",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.txt")
				writeText(t, p, csvText(false, ",", func(i int) string { return formatFloat(float32(refY[i])) + ".0e0" }))
				return p
			},
			opt: ImportOptions{LabelColumn: "3"}, format: FormatCSV, classes: nums, derived: true},
		{name: "expected classes (eval, predict)",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.csv")
				writeText(t, p, csvText(true, ",", func(i int) string { return refNames[refY[i]] }))
				return p
			},
			opt: ImportOptions{Expected: refNames}, format: FormatCSV, classes: refNames, ids: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.make(t, dir)
			if tc.opt.Labels == "y.txt" {
				tc.opt.Labels = filepath.Join(dir, tc.opt.Labels)
			}
			f, err := Open(path, ReadOptions{Import: tc.opt})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := f.Load()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(m.Data, refFeatures()) {
				t.Errorf("features %v, want %v", m.Data, refFeatures())
			}
			want := refY
			if tc.classes[0] != refNames[0] && !slices.Equal(tc.classes, []string{"0", "1", "2"}) {
				t.Fatalf("bad case classes %v", tc.classes)
			}
			if !slices.Equal(m.Labels, want) || !slices.Equal(m.Meta.Classes, tc.classes) {
				t.Errorf("labels %v classes %v, want %v %v", m.Labels, m.Meta.Classes, want, tc.classes)
			}
			if tc.ids != (m.IDs != nil) || (tc.ids && !slices.Equal(m.IDs, refIDs)) {
				t.Errorf("ids %v, want %v", m.IDs, tc.ids)
			}
			imp := f.Imported()
			if imp == nil || imp.Format != tc.format || imp.ClassesFromLabels != tc.derived {
				t.Errorf("imported %+v, want format %s, classes from labels %v", imp, tc.format, tc.derived)
			}
			if got := m.Meta.Extra[MetaClassesFrom] == ClassesFromLabels; got != tc.derived {
				t.Errorf("metadata %s = %q, want derived %v", MetaClassesFrom, m.Meta.Extra[MetaClassesFrom], tc.derived)
			}
			if line := imp.Note(path, m.Meta.Classes); !strings.Contains(line, path) || !strings.Contains(line, tc.format) {
				t.Errorf("note %q names neither the file nor its format", line)
			}
		})
	}
}

func TestOpenRefusesBadForeignFiles(t *testing.T) {
	good := func(i int) string { return refNames[refY[i]] }
	cases := []struct {
		name string
		make func(t *testing.T, dir string) string
		opt  ImportOptions
		want string
	}{
		{name: "mixed label types",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.csv")
				writeText(t, p, csvText(true, ",", func(i int) string { return []string{"1", "2", "cat", "1", "2", "1"}[i] }))
				return p
			}, want: "row 2: its label is a name but row 0's is an integer"},
		{name: "NaN feature",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.csv")
				writeText(t, p, strings.Replace(csvText(true, ",", good), "img1,1,", "img1,nan,", 1))
				return p
			}, want: "row 1: feature 0 is NaN"},
		{name: "two columns named label (#35 item 9)",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.csv")
				writeText(t, p, strings.Replace(csvText(true, ",", good), "id,a,b,c,label", "id,a,label,c,label", 1))
				return p
			}, want: `columns 2 and 4 are both named "label"`},
		{name: "a cell that is not a number",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.csv")
				writeText(t, p, strings.Replace(csvText(true, ",", good), "img3,-2,", "img3,SSN-078-05-1120,", 1))
				return p
			}, want: "row 3, column \"a\" is not a number"},
		{name: "a short CSV row",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.csv")
				writeText(t, p, strings.Replace(csvText(true, ",", good), "img2,0.25,", "img2,", 1))
				return p
			}, want: "line 4 has a different number of columns"},
		{name: "several list columns",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.parquet")
				writeArrowTable(t, p, "parquet", []arrow.Field{
					{Name: "clip", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
					{Name: "dino", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)}},
					[]arrow.Array{listOf(arrow.PrimitiveTypes.Float32, refX), listOf(arrow.PrimitiveTypes.Float32, refX)}, nil)
				return p
			}, want: "several list columns could hold the features (\"clip\", \"dino\"); name one with --features-column"},
		{name: "an unknown column beside a list column",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.arrow")
				writeArrowTable(t, p, "file", []arrow.Field{
					{Name: "emb", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
					{Name: "path", Type: arrow.BinaryTypes.String}},
					[]arrow.Array{listOf(arrow.PrimitiveTypes.Float32, refX), stringsOf(refIDs)}, nil)
				return p
			}, want: "column \"path\" is neither the features"},
		{name: "rows of different lengths",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.arrow")
				rows := slices.Clone(refX)
				rows[4] = rows[4][:2]
				writeArrowTable(t, p, "file", []arrow.Field{{Name: "emb", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)}},
					[]arrow.Array{listOf(arrow.PrimitiveTypes.Float64, rows)}, nil)
				return p
			}, want: "row 4: column \"emb\" holds 2 numbers; the rows before hold 3"},
		{name: "fewer labels than rows",
			make: func(t *testing.T, dir string) string {
				writeText(t, filepath.Join(dir, "y.txt"), "1\n2\n0\n1\n2\n")
				return "../testdata/foreign/fortran-f8.npy"
			}, opt: ImportOptions{Labels: "y.txt"}, want: "5 labels for 6 rows"},
		{name: "a pickled object array",
			make: func(t *testing.T, dir string) string { return "../testdata/foreign/object.npy" },
			want: "pickled Python objects"},
		{name: "a label not among --classes",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.csv")
				writeText(t, p, csvText(true, ",", good))
				return p
			}, opt: ImportOptions{Classes: []string{"cat", "dog"}}, want: "row 1: its label is not one of the 2 classes of --classes"},
		{name: "an integer label past --classes",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.csv")
				writeText(t, p, csvText(true, ",", func(i int) string { return "2" }))
				return p
			}, opt: ImportOptions{Classes: []string{"cat", "dog"}}, want: "row 0: its label is not a class index 0..1 of --classes"},
		{name: "a --label-column that is not there",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.csv")
				writeText(t, p, csvText(true, ",", good))
				return p
			}, opt: ImportOptions{LabelColumn: "nope"}, want: "--label-column \"nope\" is not a column (columns: id, a, b, c, label)"},
		{name: "an empty file",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.csv")
				writeText(t, p, "")
				return p
			}, want: "the file is empty"},
		{name: "bytes of no known format",
			make: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "x.bin")
				writeText(t, p, "\x00\x01\x02\x03\xff\xfe")
				return p
			}, want: "not a format dpfeat reads"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.make(t, dir)
			if tc.opt.Labels != "" && !filepath.IsAbs(tc.opt.Labels) && !strings.HasPrefix(tc.opt.Labels, "..") {
				tc.opt.Labels = filepath.Join(dir, tc.opt.Labels)
			}
			f, err := Open(path, ReadOptions{Import: tc.opt})
			if err == nil {
				f.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q, want one naming %s and saying %q", err, path, tc.want)
			}
			// A cell's value is private data: errors name the row and
			// the column, never the value (#35 item 15).
			for _, v := range []string{"SSN-078-05-1120", "bird", `"cat"`} {
				if strings.Contains(err.Error(), v) {
					t.Errorf("error %q copies the cell value %s", err, v)
				}
			}
			if strings.Contains(err.Error(), os.TempDir()+"/dpfeat-import") {
				t.Errorf("error %q names the temporary conversion", err)
			}
		})
	}
}

// Every table format Export writes reads back as the same file (CSV with
// --classes, which it cannot hold), with the metadata where the format
// holds it.
func TestExportReadsBack(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.arrow")
	meta := Metadata{Classes: refNames, EncoderSHA256: strings.Repeat("ab", 32), EncoderName: "enc", DataID: "data-1"}
	b := Batch{Dim: 3, Features: refFeatures(), Labels: slices.Clone(refY), IDs: refIDs}
	b.Labels[5] = Unlabeled
	if err := WriteFile(src, meta, WriterOptions{WithID: true}, b); err != nil {
		t.Fatal(err)
	}
	f, err := Open(src, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		ext      string
		opt      ImportOptions
		keepMeta bool
	}{
		{".arrow", ImportOptions{}, true},
		{".parquet", ImportOptions{}, true},
		{".npz", ImportOptions{}, false},
		{".csv", ImportOptions{Classes: refNames}, false},
		{".tsv", ImportOptions{Classes: refNames}, false},
	} {
		t.Run(tc.ext, func(t *testing.T) {
			out := filepath.Join(dir, "out"+tc.ext)
			if err := Export(f, out); err != nil {
				t.Fatal(err)
			}
			g, err := Open(out, ReadOptions{Import: tc.opt})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			// The data identity travels where the format can carry it
			// (#36 item 5): Arrow, Parquet, .npz.
			if md, err := ReadMetadata(out); err != nil || (md.DataID == f.Metadata().DataID) != (tc.ext != ".csv" && tc.ext != ".tsv") {
				t.Errorf("%s: data identity %q read back (%v), the source's %q", tc.ext, md.DataID, err, f.Metadata().DataID)
			}
			m, err := g.Load()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(m.Data, b.Features) || !slices.Equal(m.Labels, b.Labels) || !slices.Equal(m.IDs, refIDs) || !slices.Equal(m.Meta.Classes, refNames) {
				t.Errorf("read back %v %v %v %v", m.Data, m.Labels, m.IDs, m.Meta.Classes)
			}
			if tc.keepMeta && (m.Meta.EncoderSHA256 != meta.EncoderSHA256 || m.Meta.DataID != meta.DataID) {
				t.Errorf("metadata %+v lost the encoder or the data identity", m.Meta)
			}
		})
	}
	// .npy holds the features alone.
	out := filepath.Join(dir, "X.npy")
	if err := Export(f, out); err != nil {
		t.Fatal(err)
	}
	m, err := ReadAll(out, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Data, b.Features) || slices.ContainsFunc(m.Labels, func(l int32) bool { return l != Unlabeled }) {
		t.Errorf(".npy read back %v %v", m.Data, m.Labels)
	}
}

func TestPredictionsFormats(t *testing.T) {
	dir := t.TempDir()
	p := Predictions{Classes: refNames, IDs: refIDs[:2], Labels: []int32{1, Unlabeled}, Predicted: []int32{1, 2},
		Scores: []float32{0.1, 0.7, 0.2, 0, 0.25, float32(math.Pi)}}
	for _, ext := range []string{".arrow", ".parquet", ".csv", ".npy", ".npz"} {
		path := filepath.Join(dir, "p"+ext)
		if err := WritePredictions(path, p); err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
	}
	got, err := ReadPredictions(filepath.Join(dir, "p.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Scores, p.Scores) || !slices.Equal(got.Labels, p.Labels) || !slices.Equal(got.IDs, p.IDs) {
		t.Errorf("read back %+v", got)
	}
	if _, err := ReadPredictions(filepath.Join(dir, "p.parquet")); !errors.Is(err, ErrNotPredictions) {
		t.Errorf("ReadPredictions of a Parquet file: %v, want ErrNotPredictions", err)
	}
	csvBytes, _ := os.ReadFile(filepath.Join(dir, "p.csv"))
	want := "id,label,predicted,predicted_class,score_bird,score_cat,score_dog\nimg0,cat,1,cat,0.1,0.7,0.2\nimg1,,2,dog,0,0.25,3.1415927\n"
	if string(csvBytes) != want {
		t.Errorf("CSV:\n%s\nwant\n%s", csvBytes, want)
	}
	// The .npy scores read back through the NumPy reader.
	m, err := ReadAll(filepath.Join(dir, "p.npy"), ReadOptions{})
	if err != nil || !slices.Equal(m.Data, p.Scores) {
		t.Errorf(".npy scores %v, %v", m, err)
	}
}

// inspect reads a foreign file with NaN (it counts them); a fit's read of
// the same file refuses it, naming the row, even after inspect's read.
func TestForeignNonFiniteForInspectOnly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.csv")
	writeText(t, p, strings.Replace(csvText(true, ",", func(i int) string { return refNames[refY[i]] }), "img1,1,", "img1,nan,", 1))
	f, err := Open(p, ReadOptions{AllowNonFinite: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(f, nil)
	f.Close()
	if err != nil || s.NonFinite != 1 || s.NonFiniteRows != 1 {
		t.Errorf("summary %+v, %v: want one NaN in one row", s, err)
	}
	if _, err := Open(p, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "row 1: feature 0 is NaN") {
		t.Errorf("a fit's read: %v", err)
	}
}
