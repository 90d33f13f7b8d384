package models

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/preprocessing"
)

func TestClassifierRoundTrip(t *testing.T) {
	g, err := accounting.Account(accounting.GaussianReleases("r", 3)(5), 1e-5, accounting.AccountantGDP, accounting.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &Classifier{Kind: "linear", Classes: []string{"a", "b", "c"}, Dim: 2, Weight: []float32{1, 0, 0, 1, -1, -1}, Bias: []float32{0, 0.5, 0},
		Prep: Preprocessing{Normalize: true, Scale: 2, Center: []float64{1, -1}, Clip: 3}, EncoderSHA256: "abc", Method: "dpls",
		Hyperparameters: map[string]any{"alpha": 0.1}, Defaulted: []string{"alpha"}, Guarantee: g, TrainRows: 10, TrainCounts: []int64{5, 3, 2}}
	path := filepath.Join(t.TempDir(), "c.safetensors")
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadClassifier(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Guarantee.Epsilon != g.Epsilon || *back.Guarantee.Mu != *g.Mu || back.Classes[2] != "c" || back.Prep.Center[1] != -1 || back.Prep.Scale != 2 || back.TrainCounts[1] != 3 {
		t.Errorf("round trip: %+v", back)
	}
	// The file is plain safetensors: an 8-byte header length, a JSON header
	// with F32 tensors, then the data (what safetensors.numpy.load_file reads).
	b, _ := os.ReadFile(path)
	hl := int(binary.LittleEndian.Uint64(b))
	if header := string(b[8 : 8+hl]); !strings.Contains(header, `"bias":{"dtype":"F32","shape":[3]`) || !strings.Contains(header, `"weight":{"dtype":"F32","shape":[3,2]`) || (8+hl)%8 != 0 {
		t.Errorf("header: %q", header)
	}
	// Scores: normalised, scaled, centred (dplp's order), clipped, then
	// W·x + b: (3, 0) → (1, 0) → (2, 0) → (1, 1), inside the clip.
	s := make([]float64, 3)
	back.Scores([]float64{3, 0}, s)
	if math.Abs(s[0]-1) > 1e-6 || math.Abs(s[1]-1.5) > 1e-6 || math.Abs(s[2]+2) > 1e-6 {
		t.Errorf("scores %v", s)
	}
	// A non-finite model is never written.
	c.Weight[0] = float32(math.NaN())
	if err := c.Save(filepath.Join(t.TempDir(), "nan.safetensors")); err == nil || !strings.Contains(err.Error(), "non-finite") {
		t.Errorf("NaN model: %v", err)
	}
}

// TestValidateRefusesOverflowingSizes (#16 item 5): header sizes whose
// product overflows int once matched an empty weight tensor.
func TestValidateRefusesOverflowingSizes(t *testing.T) {
	for _, c := range []Classifier{
		{Kind: "prototypes", Classes: []string{"a", "b"}, Dim: 1 << 62, PerClass: 4},
		{Kind: "prototypes", Classes: []string{"a", "b"}, Dim: 1 << 30, PerClass: 1 << 31},
		{Kind: "linear", Classes: []string{"a", "b"}, Dim: 1 << 40, Bias: []float32{0, 0}},
		{Kind: "linear", Classes: []string{"a", "b"}, Dim: 4, Bias: []float32{0, 0}, Prep: Preprocessing{Pool: -2}},
		{Kind: "prototypes", Classes: []string{"a", "b"}, Dim: 4, PerClass: -1},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// TestValidateChecksTheTransform: a classifier file's transform must fit
// its dimension, carry its mean, and be finite.
func TestValidateChecksTheTransform(t *testing.T) {
	base := func(tf *preprocessing.Transform) Classifier {
		return Classifier{Kind: "linear", Classes: []string{"a", "b"}, Dim: 3, Weight: make([]float32, 2*tf.OutDim(3)), Bias: make([]float32, 2),
			Prep: Preprocessing{Normalize: true, Transform: tf}}
	}
	ok := base(&preprocessing.Transform{Kind: "center", In: 3, Dims: 3, Mean: []float64{0, 0, 1}})
	if err := ok.Validate(); err != nil {
		t.Fatalf("a valid transform: %v", err)
	}
	for _, c := range []struct {
		tf   *preprocessing.Transform
		want string
	}{
		{&preprocessing.Transform{Kind: "center", In: 3, Dims: 3}, "without its mean"},
		{&preprocessing.Transform{Kind: "center", In: 4, Dims: 4, Mean: make([]float64, 4)}, "for 4 features applied to 3"},
		{&preprocessing.Transform{Kind: "standardize", In: 3, Dims: 3, Mean: make([]float64, 3), Scale: make([]float64, 2)}, "scale of length 2"},
		{&preprocessing.Transform{Kind: "pca", In: 3, Dims: 2, Mean: make([]float64, 3), Projection: make([]float64, 5)}, "projection of 5 values"},
		{&preprocessing.Transform{Kind: "center", In: 3, Dims: 3, Mean: []float64{0, math.NaN(), 0}}, "mean value 1 is NaN"},
	} {
		c2 := base(c.tf)
		if err := c2.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.tf, err, c.want)
		}
	}
}
