//go:build cgo

package cli

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"

	"github.com/dpfeat/dpfeat/internal/orttest"
)

// TestFirstHour (#40 acceptance) is a new user's first hour, through the
// binary, in the folder the user works in (relative paths, as typed):
// a folder of mixed formats and sizes with linked files and a linked
// class folder, a file that is not an image, a link out of the dataset
// and a class left empty → extract → split → fit --method auto → eval →
// export-onnx (images in) → the exported model run by ONNX Runtime on
// each original file, against dpfeat predict. Every count a command
// prints is checked against what the folder holds.
func TestFirstHour(t *testing.T) {
	orttest.Need(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	encoder, err := filepath.Abs("../models/demo/fmnist-cnn.onnx")
	if err != nil {
		t.Fatal(err)
	}
	files := firstHourFolder(t, dir)
	sh := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		if err := cmd.Run(); err != nil {
			t.Fatalf("dpfeat %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errs.String())
		}
		return out.String(), errs.String()
	}
	number := func(text, pattern string) int {
		t.Helper()
		m := regexp.MustCompile(pattern).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("%q not in:\n%s", pattern, text)
		}
		v, _ := strconv.Atoi(m[1])
		return v
	}
	// 1. Extract: every image read, the rest named.
	out, errs := sh("extract", "--encoder", encoder, "--data", "photos", "--out", "all.arrow", "--quiet")
	if got := number(out, `all\.arrow: (\d+) rows × 64 features`); got != len(files) {
		t.Errorf("extract: %d rows, the folder holds %d images dpfeat reads\n%s", got, len(files), out)
	}
	if got := number(errs, `(\d+) files of the folder are not read`); got != 3 {
		t.Errorf("extract: %d files not read, want 3 (notes.txt, a link out, readme.md)\n%s", got, errs)
	}
	for _, w := range []string{"WARNING: classes sandal, shirt: no image in any", "boot/notes.txt", "shirt/o.png", "leads out of the dataset"} {
		if !strings.Contains(errs, w) {
			t.Errorf("extract's summary does not say %q:\n%s", w, errs)
		}
	}
	// 2. One folder → train and test.
	out, _ = sh("split", "--in", "all.arrow", "--val-fraction", "0.3", "--train", "train.arrow", "--val", "test.arrow", "--key", "1")
	all, train, test := number(out, `all\.arrow: (\d+) rows`), number(out, `\(train, (\d+) rows\)`), number(out, `\(validation, (\d+) rows\)`)
	if all != len(files) || train+test != all || train == 0 || test == 0 {
		t.Errorf("split: %d rows → %d + %d; the folder holds %d\n%s", all, train, test, len(files), out)
	}
	// 3. Fit and evaluate.
	out, _ = sh("fit", "--method", "auto", "--train", "train.arrow", "--epsilon", "8", "--delta", "1e-3", "--out", "clf.safetensors")
	if got := number(out, `(\d+) classes`); got != 6 {
		t.Errorf("fit: %d classes, want 6 (the class folders, the two empty ones included)\n%s", got, out)
	}
	out, _ = sh("eval", "--classifier", "clf.safetensors", "--test", "test.arrow")
	if got := number(out, `test\.arrow \((\d+) rows\)`); got != test {
		t.Errorf("eval: %d test rows, split wrote %d\n%s", got, test, out)
	}
	// 4. Deploy: the fused model takes the files as they are.
	out, _ = sh("export-onnx", "--classifier", "clf.safetensors", "--encoder", encoder, "--out", "model.onnx")
	if got := number(out, `input images, (\d+) classes`); got != 6 {
		t.Errorf("export-onnx: %d classes, want 6\n%s", got, out)
	}
	out, _ = sh("predict", "--classifier", "clf.safetensors", "--encoder", encoder, "--data", "photos", "--out", "pred.csv", "--quiet")
	if got := number(out, `(\d+) predictions over 6 classes`); got != len(files) {
		t.Errorf("predict: %d predictions, want %d\n%s", got, len(files), out)
	}
	model, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "pred.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, r := range rows[1:] {
		id := r[col["id"]]
		x, h, w := lumaOf(t, filepath.Join(dir, "photos", id))
		class := orttest.Run(t, model, "images", x, []int64{1, 1, int64(h), int64(w)}, "class")[0].([]int64)
		if want, _ := strconv.Atoi(r[col["predicted"]]); class[0] != int64(want) {
			t.Errorf("%s (%d×%d): the exported model says class %d, dpfeat predict %d", id, w, h, class[0], want)
		}
	}
}

// firstHourFolder writes photos/ under dir and returns the paths of the
// images dpfeat should read (as ids: relative to photos/).
func firstHourFolder(t *testing.T, dir string) []string {
	r := rand.New(rand.NewPCG(40, 1))
	noise := func(w, h int, grey bool) image.Image {
		if grey {
			g := image.NewGray(image.Rect(0, 0, w, h))
			for i := range g.Pix {
				g.Pix[i] = uint8(r.IntN(256))
			}
			return g
		}
		c := image.NewNRGBA(image.Rect(0, 0, w, h))
		for i := range c.Pix {
			c.Pix[i] = uint8(r.IntN(256))
			if i%4 == 3 {
				c.Pix[i] = 255
			}
		}
		return c
	}
	p := func(rel string) string { return filepath.Join(dir, "photos", rel) }
	write := func(rel string, enc func(*bytes.Buffer) error) {
		var b bytes.Buffer
		if err := enc(&b); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(p(rel)), 0o755)
		if err := os.WriteFile(p(rel), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("boot/a.png", func(b *bytes.Buffer) error { return png.Encode(b, noise(40, 30, false)) })
	write("boot/b.jpg", func(b *bytes.Buffer) error { return jpeg.Encode(b, noise(64, 48, false), nil) })
	write("boot/c.bmp", func(b *bytes.Buffer) error { return bmp.Encode(b, noise(21, 35, false)) })
	write("boot/d.tif", func(b *bytes.Buffer) error { return tiff.Encode(b, noise(28, 28, true), nil) })
	write("boot/e.gif", func(b *bytes.Buffer) error { return gif.Encode(b, noise(50, 20, true), nil) })
	for _, n := range []string{"lossless.webp", "lossy.webp"} {
		raw, err := os.ReadFile(filepath.Join("..", "testdata", "images", n))
		if err != nil {
			t.Fatal(err)
		}
		write("boot/"+n, func(b *bytes.Buffer) error { _, err := b.Write(raw); return err })
	}
	write("boot/notes.txt", func(b *bytes.Buffer) error { _, err := b.WriteString("not an image"); return err })
	for i := 0; i < 4; i++ {
		write(fmt.Sprintf("store/s%d.png", i), func(b *bytes.Buffer) error { return png.Encode(b, noise(28, 28, true)) })
	}
	os.MkdirAll(p("coat"), 0o755)
	os.MkdirAll(p("shirt"), 0o755)
	os.MkdirAll(p("sandal"), 0o755)
	os.WriteFile(p("sandal/readme.md"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(dir, "outside"), 0o755)
	write("../outside/o.png", func(b *bytes.Buffer) error { return png.Encode(b, noise(28, 28, true)) })
	for _, l := range [][2]string{
		{"../store/s0.png", "coat/s0.png"},                      // relative
		{p("store/s1.png"), "coat/s1.png"},                      // absolute, inside
		{filepath.Join(dir, "outside", "o.png"), "shirt/o.png"}, // out of the dataset: skipped
		{"store", "sneaker"},                                    // a class folder
	} {
		if err := os.Symlink(l[0], p(l[1])); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"boot/a.png", "boot/b.jpg", "boot/c.bmp", "boot/d.tif", "boot/e.gif", "boot/lossless.webp", "boot/lossy.webp",
		"coat/s0.png", "coat/s1.png", "sneaker/s0.png", "sneaker/s1.png", "sneaker/s2.png", "sneaker/s3.png",
		"store/s0.png", "store/s1.png", "store/s2.png", "store/s3.png"}
}

// lumaOf decodes an image file as a user's code would and returns its
// one-channel pixel values (ITU-R 601-2 luma of colour, as dpfeat and
// PIL's convert("L")), row-major, with its height and width.
func lumaOf(t *testing.T, path string) ([]float32, int, int) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	x := make([]float32, 0, b.Dx()*b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for px := b.Min.X; px < b.Max.X; px++ {
			var r, g, bl uint8
			switch c := img.At(px, y).(type) {
			case color.Gray:
				x = append(x, float32(c.Y))
				continue
			case color.YCbCr:
				r, g, bl = color.YCbCrToRGB(c.Y, c.Cb, c.Cr)
			default:
				rr, gg, bb, _ := c.RGBA()
				r, g, bl = uint8(rr>>8), uint8(gg>>8), uint8(bb>>8)
			}
			x = append(x, (float32(r)*299+float32(g)*587+float32(bl)*114)/1000)
		}
	}
	return x, b.Dy(), b.Dx()
}
