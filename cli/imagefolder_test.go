package cli

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// imageFolder writes n small PNGs per class.
func imageFolder(t *testing.T, root string, classes []string, n int) {
	imageFolderVariant(t, root, classes, n, 0)
}

// imageFolderVariant is imageFolder with other pixels for another variant
// (public images that are not the private ones).
func imageFolderVariant(t *testing.T, root string, classes []string, n, variant int) {
	for ci, c := range classes {
		dir := filepath.Join(root, c)
		os.MkdirAll(dir, 0o755)
		for i := 0; i < n; i++ {
			img := image.NewNRGBA(image.Rect(0, 0, 20+i, 18))
			for y := 0; y < 18; y++ {
				for x := 0; x < 20+i; x++ {
					img.SetNRGBA(x, y, color.NRGBA{uint8(40 * ci), uint8(x*9 + 17*variant), uint8(y * 11), 255})
				}
			}
			var b bytes.Buffer
			png.Encode(&b, img)
			os.WriteFile(filepath.Join(dir, string(rune('a'+i))+".png"), b.Bytes(), 0o644)
		}
	}
}

// runnerFixture is the runner tests' data: 21 images of 3 classes in
// dir/images, the tiny encoder, and their single-machine extraction
// (encoder batches of 2), which every runner's result must equal.
func runnerFixture(t *testing.T, dir string) (data, model, single string) {
	t.Helper()
	data, model, single = filepath.Join(dir, "images"), "../testdata/encoders/tiny-cnn.onnx", filepath.Join(dir, "single.arrow")
	imageFolder(t, data, []string{"cat", "dog", "eel"}, 7)
	if code, _, errs := run(t, "extract", "--encoder", model, "--data", data, "--out", single, "--encoder-batch", "2", "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	return data, model, single
}
