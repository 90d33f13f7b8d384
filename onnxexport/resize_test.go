//go:build cgo

package onnxexport

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/orttest"
	"github.com/dpfeat/dpfeat/models"
)

// resizeModel is the resize alone: "images" of any size in, "resized"
// out, in the input's layout.
func resizeModel(in models.Input) []byte {
	g := &builder{opset: minOpset, prefix: "t/"}
	out := g.opTo("resized", "Identity", []string{g.resizeLayout(in, InputImages)})
	body := appendString(nil, graphName, "resize")
	body = append(body, g.graphBody()...)
	body = appendBytes(body, graphInput, pixelInput(in, InputImages, true).marshal())
	body = appendBytes(body, graphOutput, valueInfo{name: out, elem: elemFloat, dims: []int64{0, 0, 0, 0}, param: "d"}.marshal())
	b := appendVarint(nil, modelIRVersion, irVersion)
	b = appendBytes(b, modelOpsetImport, appendVarint(appendString(nil, opsetDomain, ""), opsetVersion, minOpset))
	return appendBytes(b, modelGraph, body)
}

// TestResizeMatchesExtract runs the graph's resize and crop on images of
// many sizes (down, up, odd crop offsets, extreme aspect ratios) and
// checks every pixel against encode's Preprocessor, the one extract runs.
func TestResizeMatchesExtract(t *testing.T) {
	orttest.Need(t)
	base := func(c int, layout, resize, crop string, resizeSize int, round bool) models.Input {
		mean, std := make([]float64, c), make([]float64, c)
		for i := range std {
			std[i] = 1
		}
		return models.Input{Layout: layout, Channels: c, Height: 12, Width: 16, Scale: 1, Mean: mean, Std: std,
			Resize: resize, Crop: crop, ResizeSize: resizeSize, RoundAfterResize: round}
	}
	inputs := map[string]models.Input{
		"bilinear none":         base(3, "NCHW", "bilinear", "none", 0, false),
		"bilinear center":       base(3, "NCHW", "bilinear", "center", 19, false),
		"bicubic center":        base(3, "NCHW", "bicubic", "center", 17, false),
		"nearest center":        base(3, "NCHW", "nearest", "center", 16, false),
		"bilinear center round": base(3, "NCHW", "bilinear", "center", 18, true),
		"NHWC bicubic none":     base(3, "NHWC", "bicubic", "none", 0, false),
		"grey bilinear center":  base(1, "NCHW", "bilinear", "center", 21, false),
	}
	sizes := [][2]int{{16, 12}, {17, 33}, {64, 40}, {5, 9}, {300, 200}, {40, 401}, {21, 21}}
	r := rand.New(rand.NewPCG(7, 8))
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			model := resizeModel(in)
			prep := encode.NewPreprocessor(in)
			for _, sz := range sizes {
				w, h, c := sz[0], sz[1], in.Channels
				px := features.Pixels{Width: w, Height: h, Channels: c, Data: make([]uint8, w*h*c)}
				for i := range px.Data {
					px.Data[i] = uint8(r.IntN(256))
				}
				want := make([]float32, prep.Size())
				if err := prep.Apply(px, want); err != nil {
					t.Fatal(err)
				}
				// The model's input: the pixels as float32, in the layout.
				x := make([]float32, len(px.Data))
				shape := []int64{1, int64(h), int64(w), int64(c)}
				for i, v := range px.Data {
					x[i] = float32(v)
				}
				if in.Layout == "NCHW" {
					shape = []int64{1, int64(c), int64(h), int64(w)}
					for i, v := range px.Data {
						x[(i%c)*w*h+i/c] = float32(v)
					}
				}
				got := orttest.Run(t, model, InputImages, x, shape, "resized")[0].([]float32)
				if len(got) != len(want) {
					t.Fatalf("%d×%d: %d values, want %d", w, h, len(got), len(want))
				}
				worst, off := 0.0, 0
				for i := range want {
					d := math.Abs(float64(got[i] - want[i]))
					worst = math.Max(worst, d)
					if d > 1e-3 {
						off++
					}
				}
				// Rounded pixels may land on the other side of a half
				// where the sums' order (or a fused multiply-add) differs:
				// upscaling by 3/2 makes exact halves common. By 1, and
				// for 3 % of the pixels at most.
				if (!in.RoundAfterResize && off > 0) || worst > 1 || off*100 > 3*len(want) {
					t.Errorf("%d×%d: max |Δ| %.3g, %d of %d pixels off", w, h, worst, off, len(want))
				}
				t.Log(fmt.Sprintf("%d×%d: max |Δ| %.2g, %d of %d pixels off by more than 10⁻³", w, h, worst, off, len(want)))
			}
		})
	}
}

// TestFusedImagesMatchExtract gives a fused model (input images) images
// of several sizes and checks its scores against extract's path: the
// Preprocessor, the encoder, then the classifier.
func TestFusedImagesMatchExtract(t *testing.T) {
	orttest.Need(t)
	for _, enc := range []string{"tiny-cnn", "tiny-vit", "tiny-fp16"} {
		t.Run(enc, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "encoders", enc+".onnx")
			man, _, err := models.ManifestFor(path)
			if err != nil {
				t.Fatal(err)
			}
			man.Input.Crop, man.Input.ResizeSize = "center", man.Input.Height+3
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c := classifiers(man.Output.Dim, 3)["linear scale center clip"]
			b, err := Fused(c, raw, man, FuseOptions{Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			sess, err := encode.OpenSession(path, man, encode.SessionOptions{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			in := man.Input
			prep := encode.NewPreprocessor(in)
			r := rand.New(rand.NewPCG(9, 10))
			for _, sz := range [][2]int{{40, 23}, {in.Width, in.Height}, {7, 11}} {
				w, h, ch := sz[0], sz[1], in.Channels
				px := features.Pixels{Width: w, Height: h, Channels: ch, Data: make([]uint8, w*h*ch)}
				x := make([]float32, len(px.Data))
				for i := range px.Data {
					px.Data[i] = uint8(r.IntN(256))
					x[(i%ch)*w*h+i/ch] = float32(px.Data[i]) // NCHW
				}
				tensor := make([]float32, prep.Size())
				if err := prep.Apply(px, tensor); err != nil {
					t.Fatal(err)
				}
				feats := make([]float32, man.Output.Dim)
				if err := sess.Run(tensor, 1, feats); err != nil {
					t.Fatal(err)
				}
				got, class := run(t, b, InputImages, x, []int64{1, int64(ch), int64(h), int64(w)}, OutputScores, OutputClass)
				checkScores(t, c, feats, got, class, man.Input.DType == "float16")
			}
		})
	}
}
