package features

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func pngBytes(t testing.TB, w, h int, gray bool) []byte {
	var img image.Image
	if gray {
		g := image.NewGray(image.Rect(0, 0, w, h))
		for i := range g.Pix {
			g.Pix[i] = uint8(i)
		}
		img = g
	} else {
		c := image.NewNRGBA(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				c.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), 200, 255})
			}
		}
		img = c
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func jpegBytes(t testing.TB, w, h int) []byte {
	c := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range c.Pix {
		c.Pix[i] = 128
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, c, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readAllExamples(t *testing.T, ds Dataset) []Example {
	t.Helper()
	var out []Example
	for {
		ex, err := ds.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ex)
	}
}

func TestImageFolder(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "dog", "b.png"), pngBytes(t, 4, 3, false))
	writeFile(t, filepath.Join(root, "dog", "a.JPG"), jpegBytes(t, 8, 8))
	writeFile(t, filepath.Join(root, "cat", "x.jpeg"), jpegBytes(t, 5, 5))
	writeFile(t, filepath.Join(root, "cat", "notes.txt"), []byte("not an image"))
	writeFile(t, filepath.Join(root, "cat", ".hidden.png"), []byte("skip me"))
	ds, err := OpenDataset(root, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	if c := ds.Classes(); len(c) != 2 || c[0] != "cat" || c[1] != "dog" || ds.Len() != 3 {
		t.Fatalf("classes %v len %d", c, ds.Len())
	}
	exs := readAllExamples(t, ds)
	wantIDs := []string{"cat/x.jpeg", "dog/a.JPG", "dog/b.png"}
	wantLabels := []int32{0, 1, 1}
	for i, ex := range exs {
		if ex.ID != wantIDs[i] || ex.Label != wantLabels[i] || ex.Index != int64(i) {
			t.Errorf("example %d: %s label %d index %d", i, ex.ID, ex.Label, ex.Index)
		}
		p, err := DecodeImage(ex)
		if err != nil {
			t.Fatal(err)
		}
		if p.Channels != 3 || len(p.Data) != p.Width*p.Height*3 {
			t.Errorf("%s: decoded %dx%dx%d", ex.ID, p.Width, p.Height, p.Channels)
		}
	}
	if p, _ := DecodeImage(exs[2]); p.Width != 4 || p.Height != 3 || p.Data[3*(1*4+2)] != 2 || p.Data[3*(1*4+2)+1] != 1 || p.Data[2] != 200 {
		t.Errorf("PNG pixels decoded wrongly: %v", p.Data[:12])
	}
	if p, _ := DecodeImage(Example{Encoded: pngBytes(t, 3, 2, true), ID: "g"}); p.Channels != 1 || p.Data[5] != 5 {
		t.Errorf("grey PNG: %+v", p)
	}
}

// TestImageFolderEmptyClasses: an empty class folder is a class with no
// examples, not a missing class (the class list is public: it must not
// depend on which classes have private rows), and --classes pins the list
// and its order, a listed class without a folder included.
func TestImageFolderEmptyClasses(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "cat", "1.png"), pngBytes(t, 2, 2, true))
	writeFile(t, filepath.Join(root, "dog", "1.png"), pngBytes(t, 2, 2, true))
	if err := os.MkdirAll(filepath.Join(root, "bird"), 0o755); err != nil {
		t.Fatal(err)
	}
	ds, err := OpenDataset(root, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := ds.Classes(); strings.Join(c, ",") != "bird,cat,dog" || ds.Len() != 2 {
		t.Errorf("classes %v, %d examples; want bird,cat,dog and 2", c, ds.Len())
	}
	ds.Close()
	ds, err = OpenDataset(root, DatasetOptions{Classes: []string{"dog", "cat", "bird", "fish"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	exs := readAllExamples(t, ds)
	if c := ds.Classes(); strings.Join(c, ",") != "dog,cat,bird,fish" || len(exs) != 2 || exs[0].Label != 0 || exs[0].ID != "dog/1.png" || exs[1].Label != 1 {
		t.Errorf("pinned: classes %v, examples %+v", c, exs)
	}
}

func TestImageFolderBadInput(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "1.png"), pngBytes(t, 2, 2, true))
	if err := os.MkdirAll(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDataset(root, DatasetOptions{Classes: []string{"a"}}); err == nil || !strings.Contains(err.Error(), `folder "empty" is not one of the classes`) {
		t.Errorf("a folder outside the pinned classes: %v", err)
	}
	if _, err := OpenDataset(root, DatasetOptions{Classes: []string{"a", "a", "empty"}}); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("a class listed twice: %v", err)
	}
	if _, err := OpenDataset(t.TempDir(), DatasetOptions{}); err == nil || !strings.Contains(err.Error(), "no class folders") {
		t.Errorf("empty dataset: %v", err)
	}
	_, err := DecodeImage(Example{Encoded: []byte("\x89PNG garbage"), ID: "a/broken.png"})
	if err == nil || !strings.Contains(err.Error(), "a/broken.png") {
		t.Errorf("undecodable image: %v", err)
	}
	trunc := pngBytes(t, 40, 40, false)
	_, err = DecodeImage(Example{Encoded: trunc[:len(trunc)/2], ID: "a/trunc.png"})
	if err == nil || !strings.Contains(err.Error(), "a/trunc.png") {
		t.Errorf("truncated image: %v", err)
	}
}

// idxBytes writes an IDX file of unsigned bytes with the given dimensions.
func idxBytes(dims []int, data []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 8, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(data)
	return b.Bytes()
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func TestIDX(t *testing.T) {
	for _, compress := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "fashion-mnist")
		pix := make([]byte, 3*2*2)
		for i := range pix {
			pix[i] = byte(i * 10)
		}
		img, lab := idxBytes([]int{3, 2, 2}, pix), idxBytes([]int{3}, []byte{9, 0, 4})
		suffix := ""
		if compress {
			img, lab, suffix = gz(img), gz(lab), ".gz"
		}
		writeFile(t, filepath.Join(dir, "t10k-images-idx3-ubyte"+suffix), img)
		writeFile(t, filepath.Join(dir, "t10k-labels-idx1-ubyte"+suffix), lab)
		ds, err := OpenDataset(dir, DatasetOptions{Split: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if ds.Len() != 3 || ds.Classes()[9] != "Ankle boot" {
			t.Errorf("len %d classes %v", ds.Len(), ds.Classes())
		}
		exs := readAllExamples(t, ds)
		ds.Close()
		if len(exs) != 3 || exs[0].Label != 9 || exs[2].Label != 4 {
			t.Fatalf("examples %+v", exs)
		}
		if p := exs[1].Pixels; p.Width != 2 || p.Height != 2 || p.Channels != 1 || p.Data[0] != 40 || p.Data[3] != 70 {
			t.Errorf("pixels %+v", p)
		}
		if _, err := OpenDataset(dir, DatasetOptions{}); err == nil || !strings.Contains(err.Error(), "train-") {
			t.Errorf("missing train split: %v", err)
		}
	}
}

func TestIDXBadInput(t *testing.T) {
	cases := []struct {
		name     string
		img, lab []byte
		want     string
	}{
		{"truncated images", idxBytes([]int{3, 2, 2}, make([]byte, 9)), idxBytes([]int{3}, []byte{1, 2, 3}), "truncated at image 2"},
		{"count mismatch", idxBytes([]int{2, 2, 2}, make([]byte, 8)), idxBytes([]int{3}, []byte{1, 2, 3}), "2 images but"},
		{"wrong magic", append([]byte{1, 2, 3, 4}, make([]byte, 20)...), idxBytes([]int{1}, []byte{1}), "not an IDX file"},
		{"wrong type", append([]byte{0, 0, 0x0D, 3}, make([]byte, 20)...), idxBytes([]int{1}, []byte{1}), "IDX data type 0x0d"},
		{"label out of range", idxBytes([]int{1, 1, 1}, []byte{0}), idxBytes([]int{1}, []byte{10}), "example 0 has a label outside 0..9"},
		{"truncated labels", idxBytes([]int{3, 1, 1}, []byte{0, 0, 0}), idxBytes([]int{3}, []byte{1}), "1 of 3 labels"},
		{"corrupt gzip", append([]byte{0x1f, 0x8b}, make([]byte, 30)...), idxBytes([]int{1}, []byte{1}), "gzip"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		imgPath := filepath.Join(dir, "train-images-idx3-ubyte")
		writeFile(t, imgPath, c.img)
		writeFile(t, filepath.Join(dir, "train-labels-idx1-ubyte"), c.lab)
		err := func() error {
			ds, err := OpenDataset(imgPath, DatasetOptions{})
			if err != nil {
				return err
			}
			defer ds.Close()
			for {
				if _, err := ds.Next(); err != nil {
					if errors.Is(err, io.EOF) {
						return nil
					}
					return err
				}
			}
		}()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: %v; want the path and %q", c.name, err, c.want)
		}
	}
}

func cifarRecord(labels []byte, r, g, b byte) []byte {
	rec := append([]byte(nil), labels...)
	for _, v := range []byte{r, g, b} {
		rec = append(rec, bytes.Repeat([]byte{v}, 1024)...)
	}
	return rec
}

func TestCIFAR(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data_batch_1.bin"), append(cifarRecord([]byte{3}, 1, 2, 3), cifarRecord([]byte{9}, 4, 5, 6)...))
	writeFile(t, filepath.Join(dir, "data_batch_2.bin"), cifarRecord([]byte{0}, 7, 8, 9))
	writeFile(t, filepath.Join(dir, "test_batch.bin"), cifarRecord([]byte{5}, 0, 0, 0))
	ds, err := OpenDataset(dir, DatasetOptions{Split: "train"})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 3 || ds.Classes()[3] != "cat" {
		t.Errorf("len %d classes %v", ds.Len(), ds.Classes())
	}
	exs := readAllExamples(t, ds)
	ds.Close()
	if len(exs) != 3 || exs[1].Label != 9 || exs[2].Label != 0 || exs[2].Index != 2 || exs[2].Position != "data_batch_2.bin#0" || exs[2].ID != ContentID(exs[2]) {
		t.Fatalf("examples %+v", exs)
	}
	if p := exs[1].Pixels; p.Channels != 3 || p.Data[0] != 4 || p.Data[1] != 5 || p.Data[2] != 6 || p.Data[3*1023+2] != 6 {
		t.Errorf("CIFAR pixels are not interleaved RGB: %v", p.Data[:6])
	}
	// CIFAR-100: coarse and fine labels; the fine one is used.
	dir100 := t.TempDir()
	writeFile(t, filepath.Join(dir100, "test.bin"), cifarRecord([]byte{4, 99}, 1, 1, 1))
	ds, err = OpenDataset(dir100, DatasetOptions{Split: "test"})
	if err != nil {
		t.Fatal(err)
	}
	exs = readAllExamples(t, ds)
	ds.Close()
	if len(exs) != 1 || exs[0].Label != 99 || len(ds.Classes()) != 100 || ds.Classes()[99] != "worm" {
		t.Errorf("CIFAR-100: %+v, %d classes", exs, len(ds.Classes()))
	}
	// A batch that is not a whole number of records.
	bad := filepath.Join(t.TempDir(), "data_batch_1.bin")
	writeFile(t, bad, cifarRecord([]byte{1}, 0, 0, 0)[:3000])
	if _, err := OpenDataset(bad, DatasetOptions{}); err == nil || !strings.Contains(err.Error(), "not a whole number of CIFAR-10 records") {
		t.Errorf("short CIFAR batch: %v", err)
	}
	outOfRange := filepath.Join(t.TempDir(), "data_batch_1.bin")
	writeFile(t, outOfRange, cifarRecord([]byte{12}, 0, 0, 0))
	ds, err = OpenDataset(outOfRange, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// (The value, 12, is private: the message must not hold it. The
	// temporary folder's random name may, so it is taken out first.)
	if _, err := ds.Next(); err == nil || !strings.Contains(err.Error(), "record 0 has a label outside 0..9") || strings.Contains(strings.ReplaceAll(err.Error(), outOfRange, "FILE"), "12") {
		t.Errorf("CIFAR label out of range: %v", err)
	}
}

// writeHF writes a Hugging Face datasets-style Arrow stream.
func writeHF(t *testing.T, path string, images [][]byte, labels []int64, names []string) {
	t.Helper()
	mem := memory.NewGoAllocator()
	imgType := arrow.StructOf(arrow.Field{Name: "bytes", Type: arrow.BinaryTypes.Binary, Nullable: true}, arrow.Field{Name: "path", Type: arrow.BinaryTypes.String, Nullable: true})
	hf := `{"info": {"features": {"image": {"_type": "Image"}, "label": {"names": ["` + strings.Join(names, `","`) + `"], "_type": "ClassLabel"}}}}`
	md := arrow.NewMetadata([]string{"huggingface"}, []string{hf})
	s := arrow.NewSchema([]arrow.Field{{Name: "image", Type: imgType, Nullable: true}, {Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, &md)
	b := array.NewRecordBuilder(mem, s)
	defer b.Release()
	sb := b.Field(0).(*array.StructBuilder)
	for i, img := range images {
		sb.Append(true)
		sb.FieldBuilder(0).(*array.BinaryBuilder).Append(img)
		sb.FieldBuilder(1).(*array.StringBuilder).Append(filepath.Join("imgs", string(rune('a'+i))+".png"))
		b.Field(1).(*array.Int64Builder).Append(labels[i])
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := ipc.NewWriter(f, ipc.WithSchema(s))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f.Close()
}

func TestHuggingFace(t *testing.T) {
	dir := t.TempDir()
	names := []string{"ant", "bee"}
	writeHF(t, filepath.Join(dir, "data-00000-of-00002.arrow"), [][]byte{pngBytes(t, 2, 2, false), pngBytes(t, 3, 3, true)}, []int64{1, 0}, names)
	writeHF(t, filepath.Join(dir, "data-00001-of-00002.arrow"), [][]byte{pngBytes(t, 2, 2, false)}, []int64{-1}, names)
	ds, err := OpenDataset(dir, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := ds.Classes(); len(c) != 2 || c[1] != "bee" {
		t.Errorf("classes %v", c)
	}
	exs := readAllExamples(t, ds)
	ds.Close()
	if len(exs) != 3 || exs[0].Label != 1 || exs[1].Label != 0 || exs[2].Label != Unlabeled || exs[2].Index != 2 {
		t.Fatalf("examples %+v", exs)
	}
	if exs[0].ID != "imgs/a.png" {
		t.Errorf("id %q", exs[0].ID)
	}
	if p, err := DecodeImage(exs[1]); err != nil || p.Width != 3 {
		t.Errorf("decode: %+v %v", p, err)
	}

	// One file, and bad ones.
	one := filepath.Join(t.TempDir(), "train.arrow")
	writeHF(t, one, [][]byte{pngBytes(t, 2, 2, false)}, []int64{7}, names)
	ds, err = OpenDataset(one, DatasetOptions{})
	if err == nil {
		_, err = ds.Next()
		ds.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "label 7 out of range") {
		t.Errorf("label out of range: %v", err)
	}
	notStream := filepath.Join(t.TempDir(), "x.arrow")
	writeFile(t, notStream, []byte("definitely not arrow"))
	if _, err := OpenDataset(notStream, DatasetOptions{}); err == nil || !strings.Contains(err.Error(), notStream) {
		t.Errorf("garbage .arrow: %v", err)
	}
}

// TestNonUTF8Names (#16 item 16): a file name that is not UTF-8 becomes a
// quoted, valid and unique id; the writer refuses an invalid id; and a
// file whose utf8 id column holds invalid bytes (written by another tool)
// is refused on read with the row named.
func TestNonUTF8Names(t *testing.T) {
	root := t.TempDir()
	bad := "caf\xe9.png"
	writeFile(t, filepath.Join(root, "a", bad), pngBytes(t, 2, 2, true))
	writeFile(t, filepath.Join(root, "a", "ok.png"), pngBytes(t, 2, 2, true))
	ds, err := OpenDataset(root, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exs := readAllExamples(t, ds)
	ds.Close()
	for _, ex := range exs {
		if !utf8.ValidString(ex.ID) {
			t.Errorf("id %q is not UTF-8", ex.ID)
		}
	}
	if exs[0].ID != `"a/caf\xe9.png"` {
		t.Errorf("escaped id %s", exs[0].ID)
	}
	b := Batch{Dim: 1, Features: []float32{1}, Labels: []int32{0}, IDs: []string{"x\xff"}}
	path := filepath.Join(root, "f.arrow")
	if err := WriteFile(path, Metadata{Classes: []string{"a"}}, WriterOptions{WithID: true}, b); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("writer: %v", err)
	}
	// Another tool's file with raw bytes in the id column.
	mem := memory.NewGoAllocator()
	vb := array.NewFloat32Builder(mem)
	vb.AppendValues([]float32{1, 2}, nil)
	fsl := array.MakeFromData(array.NewData(arrow.FixedSizeListOf(1, arrow.PrimitiveTypes.Float32), 2, []*memory.Buffer{nil}, []arrow.ArrayData{vb.NewArray().Data()}, 0, 0))
	lb := array.NewInt32Builder(mem)
	lb.AppendValues([]int32{0, 0}, nil)
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"fine", "x\xff"}, nil)
	md := arrow.NewMetadata([]string{MetaClasses}, []string{`["a"]`})
	s := arrow.NewSchema([]arrow.Field{{Name: ColFeatures, Type: fsl.DataType()}, {Name: ColLabel, Type: arrow.PrimitiveTypes.Int32, Nullable: true}, {Name: ColID, Type: arrow.BinaryTypes.String, Nullable: true}}, &md)
	rec := array.NewRecordBatch(s, []arrow.Array{fsl, lb.NewArray(), sb.NewArray()}, 2)
	f, _ := os.Create(path)
	w, _ := ipc.NewFileWriter(f, ipc.WithSchema(s))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f.Close()
	if _, err := ReadAll(path, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "row 1") || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("reader: %v", err)
	}
}

// TestSchemaSizeAgainstFile (#16 item 7): a file whose schema claims 10⁷
// features per row, with one row of 7,777 values behind it (the size
// patched in the schema's bytes), is refused at Open, before a caller
// allocates by the claimed dimension.
func TestSchemaSizeAgainstFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "liar.arrow")
	b := Batch{Dim: 7777, Features: make([]float32, 7777), Labels: []int32{0}}
	if err := WriteFile(path, Metadata{Classes: []string{"a"}}, WriterOptions{}, b); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	var from, to [4]byte
	binary.LittleEndian.PutUint32(from[:], 7777)
	binary.LittleEndian.PutUint32(to[:], 10_000_000)
	patched := bytes.ReplaceAll(raw, from[:], to[:])
	if bytes.Equal(patched, raw) {
		t.Fatal("the list size was not found in the file")
	}
	os.WriteFile(path, patched, 0o644)
	_, err := Open(path, ReadOptions{})
	if err == nil || !(strings.Contains(err.Error(), "more than the file's") || strings.Contains(err.Error(), "corrupt")) {
		t.Fatalf("a %d-byte file claiming 10⁷ features: %v", len(patched), err)
	}
	t.Logf("%d bytes: %v", len(patched), err)
}

// TestDatasetDictAsksForASplit: a save_to_disk DatasetDict root is not an
// image folder whose classes are its splits.
func TestDatasetDictAsksForASplit(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []string{"train", "test"} {
		os.MkdirAll(filepath.Join(dir, s), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "dataset_dict.json"), []byte(`{"splits": ["train", "test"]}`), 0o644)
	for _, c := range []struct{ split, want string }{
		{"", "a Hugging Face DatasetDict with splits train, test; pass --split"},
		{"validation", `the DatasetDict has no split "validation" (it has train, test)`},
	} {
		_, err := OpenDataset(dir, DatasetOptions{Split: c.split})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("split %q: %v; want %q", c.split, err, c.want)
		}
	}
}
