package onnxexport

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/preprocessing"
)

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
