package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/gif"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/internal/orttest"
	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// TestImageFoldersDropNothingSilently (#40 item 1): a symlinked class
// folder and symlinked images are read, as are BMP, GIF and TIFF; every
// file not read is counted and named with why, in the summary and the
// JSON, and a class left empty is named in a warning.
func TestImageFoldersDropNothingSilently(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "photos")
	img := image.NewGray(image.Rect(0, 0, 20, 20))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	write := func(path string, enc func(*bytes.Buffer) error) {
		var b bytes.Buffer
		if err := enc(&b); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pngEnc := func(b *bytes.Buffer) error { return png.Encode(b, img) }
	write(filepath.Join(root, "boot", "a.png"), pngEnc)
	write(filepath.Join(root, "boot", "b.bmp"), func(b *bytes.Buffer) error { return bmp.Encode(b, img) })
	write(filepath.Join(root, "boot", "c.tif"), func(b *bytes.Buffer) error { return tiff.Encode(b, img, nil) })
	write(filepath.Join(root, "boot", "d.gif"), func(b *bytes.Buffer) error { return gif.Encode(b, img, nil) })
	os.WriteFile(filepath.Join(root, "boot", "notes.txt"), []byte("hello"), 0o644)
	// Images kept elsewhere in the dataset, linked into a class folder and
	// as a whole class folder.
	write(filepath.Join(root, "store", "s1.png"), pngEnc)
	write(filepath.Join(root, "store", "s2.png"), pngEnc)
	os.MkdirAll(filepath.Join(dir, "outside"), 0o755)
	write(filepath.Join(dir, "outside", "o.png"), pngEnc)
	os.MkdirAll(filepath.Join(root, "shirt"), 0o755)
	os.Symlink(filepath.Join(root, "store", "s1.png"), filepath.Join(root, "shirt", "s1.png"))
	os.Symlink(filepath.Join(dir, "outside", "o.png"), filepath.Join(root, "shirt", "o.png"))
	os.Symlink(filepath.Join(root, "store"), filepath.Join(root, "sneaker"))
	os.MkdirAll(filepath.Join(root, "sandal"), 0o755)
	os.WriteFile(filepath.Join(root, "sandal", "readme.md"), []byte("x"), 0o644)
	code, stdout, errs := run(t, "extract", "--encoder", "../testdata/encoders/tiny-cnn.onnx", "--data", root, "--out", filepath.Join(dir, "f.arrow"), "--quiet", "--json")
	if code != 0 {
		t.Fatal(errs)
	}
	var rep struct {
		Rows         int64
		SkippedFiles []struct{ Path, Why string } `json:"skipped_files"`
		EmptyClasses []string                     `json:"empty_classes"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	// boot: png, bmp, tif, gif; shirt: s1 (linked); sneaker: s1, s2 (linked folder); store: s1, s2.
	if rep.Rows != 9 {
		t.Errorf("%d rows read, want 9: %s", rep.Rows, stdout)
	}
	why := map[string]string{}
	for _, s := range rep.SkippedFiles {
		why[s.Path] = s.Why
	}
	for path, want := range map[string]string{"boot/notes.txt": "not an image format", "shirt/o.png": "leads out of the dataset", "sandal/readme.md": "not an image format"} {
		if !strings.Contains(why[path], want) {
			t.Errorf("%s: skipped because %q, want %q (all: %v)", path, why[path], want, rep.SkippedFiles)
		}
	}
	if len(rep.SkippedFiles) != 3 || len(rep.EmptyClasses) != 1 || rep.EmptyClasses[0] != "sandal" {
		t.Errorf("skipped %v, empty classes %v", rep.SkippedFiles, rep.EmptyClasses)
	}
	if !strings.Contains(errs, "3 files of the folder are not read") || !strings.Contains(errs, "WARNING: class sandal") {
		t.Errorf("the summary does not say what was dropped: %s", errs)
	}
}

// TestCSVWithAPandasIndex (#40 item 2): df.to_csv writes the index as an
// unnamed first column, which was read as a feature (129 columns for 128).
// It is dropped with a note saying which columns became features, and
// --id-column "" takes it as the id.
func TestCSVWithAPandasIndex(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "emb.csv")
	var b strings.Builder
	b.WriteString(",f0,f1,f2,label\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "%d,%g,%g,%g,%s\n", i, float64(i%3), 0.5, float64(i)/30, []string{"a", "b", "c"}[i%3])
	}
	os.WriteFile(csv, []byte(b.String()), 0o644)
	code, stdout, errs := run(t, "inspect", "--json", csv)
	if code != 0 {
		t.Fatal(errs)
	}
	var rep struct{ Dim int }
	json.Unmarshal([]byte(stdout), &rep)
	if rep.Dim != 3 {
		t.Errorf("dimension %d, want 3 (the index is not a feature): %s %s", rep.Dim, stdout, errs)
	}
	out := filepath.Join(dir, "f.arrow")
	if code, _, errs := run(t, "convert", "--in", csv, "--out", out, "--id-column", ""); code != 0 {
		t.Fatal(errs)
	}
	if code, stdout, _ := run(t, "inspect", "--json", out); code != 0 || !strings.Contains(stdout, `"has_ids": true`) {
		t.Errorf("--id-column \"\" did not keep the index as ids: %s", stdout)
	}
	named := filepath.Join(dir, "named.csv")
	os.WriteFile(named, []byte("idx,f0,label\n0,1,a\n1,2,b\n"), 0o644)
	if code, _, errs := run(t, "convert", "--in", named, "--out", filepath.Join(dir, "g.arrow"), "--id-column", ""); code != 1 || !strings.Contains(errs, `the first column is named "idx"`) {
		t.Errorf("--id-column \"\" on a file whose first column is named: %d %s", code, errs)
	}
}
