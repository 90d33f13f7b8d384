package onnxexport

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/preprocessing"
)

// needRuntime skips without ONNX Runtime, unless DPFEAT_REQUIRE_ORT is
// set (as make test does), where that is a failure.
func needRuntime(t *testing.T) {
	t.Helper()
	if err := encode.InitRuntime(""); err != nil {
		if os.Getenv("DPFEAT_REQUIRE_ORT") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// run runs an exported model on one float32 input and returns its scores
// and classes.
func run(t *testing.T, model []byte, input string, x []float32, shape []int64, scores, class string) ([]float32, []int64) {
	t.Helper()
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(model, []string{input}, []string{scores, class}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	in, err := ort.NewTensor(ort.NewShape(shape...), x)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Destroy()
	outs := []ort.Value{nil, nil}
	if err := s.Run([]ort.Value{in}, outs); err != nil {
		t.Fatal(err)
	}
	defer outs[0].Destroy()
	defer outs[1].Destroy()
	return append([]float32(nil), outs[0].(*ort.Tensor[float32]).GetData()...), append([]int64(nil), outs[1].(*ort.Tensor[int64]).GetData()...)
}

func randn(r *rand.Rand, n int, s float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = r.NormFloat64() * s
	}
	return out
}

// classifiers covers every kind of head and every preprocessing step.
func classifiers(d, m int) map[string]*models.Classifier {
	r := rand.New(rand.NewPCG(1, 2))
	lin := func(p preprocessing.Preprocessing) *models.Classifier {
		k := p.PooledDim(d)
		return &models.Classifier{Kind: "linear", Classes: names(m), Dim: d, Weight: models.Float32s(randn(r, m*k, 1)),
			Bias: models.Float32s(randn(r, m, 0.1)), Prep: p, Method: "dpls"}
	}
	proto := func(k int, dist string, p preprocessing.Preprocessing) *models.Classifier {
		w := models.Float32s(randn(r, m*k*p.PooledDim(d), 0.3))
		if dist == "cosine" {
			for i := range p.PooledDim(d) {
				w[i] = 0 // a zero prototype: distance 1
			}
		}
		return &models.Classifier{Kind: "prototypes", Classes: names(m), Dim: d, Weight: w, PerClass: k, Distance: dist, Prep: p, Method: "dpplmean"}
	}
	pca := &preprocessing.Transform{Kind: "pca", Source: "private", In: d, Dims: d / 2, Mean: randn(r, d, 0.05), Projection: randn(r, d/2*d, 0.2)}
	std := &preprocessing.Transform{Kind: "standardize", Source: "public", In: d, Dims: d, Mean: randn(r, d, 0.05), Scale: randn(r, d, 1)}
	return map[string]*models.Classifier{
		"linear":                    lin(preprocessing.Preprocessing{}),
		"linear normalize clip":     lin(preprocessing.Preprocessing{Normalize: true, Clip: 1}),
		"linear scale center clip":  lin(preprocessing.Preprocessing{Normalize: true, Scale: 3, Center: randn(r, d, 0.1), Clip: 0.5}),
		"linear pool (ragged)":      lin(preprocessing.Preprocessing{Normalize: true, Pool: 3}),
		"linear pca transform":      lin(preprocessing.Preprocessing{Transform: pca, Normalize: true, Clip: 1}),
		"linear standardize":        lin(preprocessing.Preprocessing{Transform: std, Normalize: true}),
		"prototypes euclidean":      proto(1, "euclidean", preprocessing.Preprocessing{Normalize: true}),
		"prototypes euclidean K=3":  proto(3, "euclidean", preprocessing.Preprocessing{Normalize: true, Pool: 2}),
		"prototypes cosine K=2":     proto(2, "cosine", preprocessing.Preprocessing{Normalize: true}),
		"prototypes cosine no prep": proto(1, "cosine", preprocessing.Preprocessing{}),
	}
}

func names(m int) []string {
	out := make([]string, m)
	for i := range out {
		out[i] = string(rune('a' + i))
	}
	return out
}

// checkScores compares exported scores and classes with Classifier.Scores
// on the features x (n rows of c.Dim).
func checkScores(t *testing.T, c *models.Classifier, x []float32, got []float32, class []int64, single bool) {
	t.Helper()
	m, n := len(c.Classes), len(x)/c.Dim
	want := make([]float64, m)
	worst := 0.0
	for i := 0; i < n; i++ {
		row := make([]float64, c.Dim)
		for j := range row {
			row[j] = float64(x[i*c.Dim+j])
		}
		c.Scores(row, want)
		best := 0
		for j := range want {
			e := math.Abs(want[j] - float64(got[i*m+j]))
			if single {
				e /= math.Max(1, math.Abs(want[j]))
			}
			worst = math.Max(worst, e)
			if want[j] > want[best] {
				best = j
			}
		}
		// The same argmax, unless the top two are within float32 rounding.
		if int64(best) != class[i] && math.Abs(want[best]-want[class[i]]) > 1e-5 {
			t.Errorf("row %d: class %d, dpfeat predicts %d", i, class[i], best)
		}
	}
	if worst > 1e-5 {
		t.Errorf("max |score difference| %.2g > 1e-5", worst)
	}
}

func TestHeadMatchesPredict(t *testing.T) {
	needRuntime(t)
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
	needRuntime(t)
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
				b, err := Fused(c, raw, man, FuseOptions{Pixels: pixels, Version: "test"})
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

func TestFusedRefusesAnotherEncoder(t *testing.T) {
	path := filepath.Join("..", "testdata", "encoders", "tiny-cnn.onnx")
	man, _, err := models.ManifestFor(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	c := classifiers(man.Output.Dim, 3)["linear"]
	c.EncoderSHA256, c.EncoderName = "00ff", "other"
	if _, err := Fused(c, raw, man, FuseOptions{}); err == nil {
		t.Fatal("fused a head fitted on another encoder's features")
	}
	if _, err := Fused(c, raw, man, FuseOptions{Force: true}); err != nil {
		t.Fatalf("with Force: %v", err)
	}
	c.EncoderSHA256 = ""
	c.Dim = 5
	c.Weight = c.Weight[:3*5]
	if _, err := Fused(c, raw, man, FuseOptions{}); err == nil {
		t.Fatal("fused a head of the wrong dimension")
	}
}
