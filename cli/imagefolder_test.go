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
