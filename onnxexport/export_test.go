//go:build cgo

package onnxexport

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/internal/orttest"
	"github.com/dpfeat/dpfeat/models"
)

// run runs an exported model on one float32 input and returns its scores
// and classes.
func run(t *testing.T, model []byte, input string, x []float32, shape []int64, scores, class string) ([]float32, []int64) {
	t.Helper()
	got := orttest.Run(t, model, input, x, shape, scores, class)
	return got[0].([]float32), got[1].([]int64)
}

func TestHeadMatchesPredict(t *testing.T) {
	orttest.Need(t)
	const d, m, n = 11, 4, 40
	r := rand.New(rand.NewPCG(3, 4))
	x := models.Float32s(randn(r, n*d, 2))
	for i := 0; i < d; i++ {
		x[i] = 0 // a zero row
	}
	for name, c := range classifiers(d, m) {
		for _, single := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s float32=%v", name, single), func(t *testing.T) {
				b, err := Head(c, "test", single)
				if err != nil {
					t.Fatal(err)
				}
				got, class := run(t, b, InputFeatures, x, []int64{n, d}, OutputScores, OutputClass)
				checkScores(t, c, x, got, class, single)
			})
		}
	}
}

// TestFusedMatchesPipeline fuses test encoders of each pooling and input
// type with a head and checks the model on pixel values against the
// encoder run as extract runs it, then the classifier.
func TestFusedMatchesPipeline(t *testing.T) {
	orttest.Need(t)
	for _, enc := range []string{"tiny-cnn", "tiny-vit", "tiny-fp16"} {
		for _, pixels := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s pixels=%v", enc, pixels), func(t *testing.T) {
				path := filepath.Join("..", "testdata", "encoders", enc+".onnx")
				man, _, err := models.ManifestFor(path)
				if err != nil {
					t.Fatal(err)
				}
				if man.Input.DType == "float16" && !pixels {
					t.Skip("the encoder's own input is float16; this test feeds float32")
				}
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				d := man.Output.Dim
				c := classifiers(d, 3)["linear scale center clip"]
				sess, err := encode.OpenSession(path, man, encode.SessionOptions{Threads: 1})
				if err != nil {
					t.Fatal(err)
				}
				defer sess.Close()
				in := man.Input
				const n = 5
				size := in.Channels * in.Height * in.Width
				r := rand.New(rand.NewPCG(5, 6))
				px := make([]float32, n*size)
				norm := make([]float32, n*size)
				hw := in.Height * in.Width
				for i := range px {
					px[i] = float32(r.IntN(256))
					ch := (i / hw) % in.Channels // NCHW
					norm[i] = (px[i]*float32(in.Scale) - float32(in.Mean[ch])) / float32(in.Std[ch])
				}
				feats := make([]float32, n*d)
				if err := sess.Run(norm, n, feats); err != nil {
					t.Fatal(err)
				}
				b, err := Fused(c, raw, man, FuseOptions{Input: map[bool]Takes{true: TakesPixels, false: TakesEncoderInput}[pixels], Version: "test"})
				if err != nil {
					t.Fatal(err)
				}
				input, x := in.Name, norm
				if pixels {
					input, x = InputPixels, px
				}
				got, class := run(t, b, input, x, []int64{n, int64(in.Channels), int64(in.Height), int64(in.Width)}, OutputScores, OutputClass)
				checkScores(t, c, feats, got, class, false)
			})
		}
	}
}
