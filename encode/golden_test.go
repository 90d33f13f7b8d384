package encode

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

// TestPreprocessMatchesTorchvision compares with tensors that torchvision's
// transforms (on tensors, antialias=True) produced for a 13×9 RGB image:
// bilinear up- and downscaling, bicubic resize of the shorter side with a
// center crop, and crop_pct. testdata/gen/make_testdata.py made them.
func TestPreprocessMatchesTorchvision(t *testing.T) {
	b, err := os.ReadFile("../testdata/preprocess-golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Image struct {
			Width, Height, Channels int
			Data                    []uint8
		}
		Cases []struct {
			Name   string
			Input  json.RawMessage
			Shape  []int
			Values []float64
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	px := features.Pixels{Width: g.Image.Width, Height: g.Image.Height, Channels: g.Image.Channels, Data: g.Image.Data}
	for _, c := range g.Cases {
		var in models.Input
		if err := json.Unmarshal(c.Input, &in); err != nil {
			t.Fatal(err)
		}
		in = input(t, in)
		p := NewPreprocessor(in)
		dst := make([]float32, p.Size())
		if len(dst) != len(c.Values) {
			t.Fatalf("%s: %d values, golden %d (shape %v)", c.Name, len(dst), len(c.Values), c.Shape)
		}
		if err := p.Apply(px, dst); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i, v := range c.Values {
			worst = math.Max(worst, math.Abs(float64(dst[i])-v))
		}
		// float32 arithmetic on 0–255 values then /255/std: 1e-4 is a few
		// ulps of the normalised values.
		if worst > 1e-4 {
			t.Errorf("%s: max difference %.3g from torchvision", c.Name, worst)
		}
	}
}
