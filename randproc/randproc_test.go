package randproc

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/features"
)

// The dead leaves' radii follow p(r) ∝ r⁻³ on [a, b]: the Kolmogorov–
// Smirnov distance of 100,000 draws from F(r) = (a⁻² − r⁻²)/(a⁻² − b⁻²)
// is below the 1% critical value 1.63/√n, and the exponent's maximum-
// likelihood estimate (untruncated: b/a = 100 makes the truncation's
// effect on it small) is 3 within 0.05.
func TestDeadLeavesSizeLaw(t *testing.T) {
	const n, a, b = 100000, 0.01, 1.0
	r := Stream(1, "deadleaves", 0)
	radii := make([]float64, n)
	var logs float64
	for i := range radii {
		radii[i] = Radius(r.Float64(), a, b)
		if radii[i] < a || radii[i] > b {
			t.Fatalf("radius %v outside [%v, %v]", radii[i], a, b)
		}
		logs += math.Log(radii[i] / a)
	}
	sort.Float64s(radii)
	var ks float64
	for i, x := range radii {
		F := (1/(a*a) - 1/(x*x)) / (1/(a*a) - 1/(b*b))
		ks = math.Max(ks, math.Max(math.Abs(F-float64(i)/n), math.Abs(F-float64(i+1)/n)))
	}
	if ks > 1.63/math.Sqrt(n) {
		t.Errorf("KS distance %.4f from the r⁻³ law (1%% critical value %.4f)", ks, 1.63/math.Sqrt(n))
	}
	if alpha := 1 + n/logs; math.Abs(alpha-3) > 0.05 {
		t.Errorf("maximum-likelihood exponent %.3f, want 3", alpha)
	}
}

// A dead-leaves image is covered by discs of few colours (each disc one),
// and is a function of the seed and its index.
func TestDeadLeavesImages(t *testing.T) {
	p, _ := New("deadleaves")
	for _, c := range []int{1, 3} {
		im := p.Image(Stream(4, "deadleaves", 7), 32, 24, c)
		again := p.Image(Stream(4, "deadleaves", 7), 32, 24, c)
		if !slices.Equal(im.Data, again.Data) {
			t.Fatal("the same stream drew another image")
		}
		colours := map[string]bool{}
		for i := 0; i < 32*24; i++ {
			colours[string(im.Data[i*c:(i+1)*c])] = true
		}
		if len(colours) < 5 || len(colours) > 32*24/2 {
			t.Errorf("%d channels: %d distinct colours in 768 pixels; expected a few occluding discs", c, len(colours))
		}
	}
}

// A spectrum field's power falls as 1/|f|^β: the slope of its radially
// averaged power spectrum, over 8 fields of 128×128, is β within 0.1.
func TestSpectrumSlope(t *testing.T) {
	for _, beta := range []float64{1.5, 2, 3} {
		r := rand.New(rand.NewPCG(uint64(beta*10), 1))
		var sum float64
		for range 8 {
			sum += PowerSlope(Field(r, 128, 128, beta), 128, 128, 0.02, 0.45)
		}
		if got := sum / 8; math.Abs(got-beta) > 0.1 {
			t.Errorf("β = %v: measured slope %.3f", beta, got)
		}
	}
	// The images keep the field's mean and spread: mean 128, sd 40.
	p, _ := New("spectrum")
	im := p.Image(Stream(2, "spectrum", 3), 64, 64, 3)
	var mean float64
	for _, v := range im.Data {
		mean += float64(v)
	}
	if mean /= float64(len(im.Data)); math.Abs(mean-128) > 3 {
		t.Errorf("mean level %.1f, want 128", mean)
	}
}

// Generate writes one PNG per image under its process's folder (a dataset
// whose classes are the processes), the settings and a contact sheet; an
// interrupted run resumes to the same bytes; a folder in use is refused.
func TestGenerate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "synth")
	o := Options{Processes: []string{"deadleaves", "spectrum"}, Width: 12, Height: 10, Channels: 1, Count: 9, Seed: 5}
	if made, err := Generate(context.Background(), dir, o, false, nil); err != nil || made != 9 {
		t.Fatalf("made %d, %v", made, err)
	}
	ds, err := features.OpenDataset(dir, features.DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ds.Classes(), o.Processes) || ds.Len() != 9 {
		t.Errorf("dataset: classes %v, %d images", ds.Classes(), ds.Len())
	}
	ds.Close()
	sheet, err := os.ReadFile(filepath.Join(dir, ContactSheet))
	if err != nil || len(sheet) == 0 {
		t.Fatalf("contact sheet: %v", err)
	}
	first, _ := os.ReadFile(o.Path(dir, 4))
	os.Remove(o.Path(dir, 4))
	os.Remove(o.Path(dir, 8))
	if _, err := Generate(context.Background(), dir, o, false, nil); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("a folder in use: %v", err)
	}
	if made, err := Generate(context.Background(), dir, o, true, nil); err != nil || made != 2 {
		t.Fatalf("resume: made %d, %v", made, err)
	}
	again, _ := os.ReadFile(o.Path(dir, 4))
	if !bytes.Equal(first, again) {
		t.Error("the resumed image differs")
	}
	o2 := o
	o2.Seed = 6
	if _, err := Generate(context.Background(), dir, o2, true, nil); err == nil || !strings.Contains(err.Error(), "settings") {
		t.Errorf("resume with other settings: %v", err)
	}
	for _, bad := range []Options{{Processes: []string{"clouds"}, Width: 4, Height: 4, Channels: 1, Count: 1}, {Processes: o.Processes, Width: 4, Height: 4, Channels: 2, Count: 1}} {
		if err := bad.Check(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
