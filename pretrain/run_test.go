package pretrain

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

// testRun pretrains the test MLP's first layer on 40 random 2×4 images.
func testRun(t *testing.T, g *Graphs, dir string, steps int) *Run {
	r := rand.New(rand.NewPCG(3, 3))
	var images []features.Pixels
	for range 40 {
		px := features.Pixels{Width: 2, Height: 4, Channels: 1, Data: make([]uint8, 8)}
		for k := range px.Data {
			px.Data[k] = uint8(r.IntN(256))
		}
		images = append(images, px)
	}
	prep := encode.NewPreprocessor(models.Input{Layout: "NCHW", Channels: 1, Height: 4, Width: 2, Scale: 1.0 / 255, Mean: []float64{0.5}, Std: []float64{0.25}})
	c := Config{Steps: steps, Batch: 8, LR: 0.01, Temperature: 2, Lambda: 1, Augment: "flip", Seed: 4}
	return &Run{Graphs: g, Images: images, Prep: prep, Config: c, Checkpoint: filepath.Join(dir, "ck.safetensors"), Every: 5,
		Settings: Settings("e", "v", "test", 40, c)}
}

func clone(p [][]float32) [][]float32 {
	out := make([][]float32, len(p))
	for i := range p {
		out[i] = slices.Clone(p[i])
	}
	return out
}

// TestPretrainLowersTheLossAndResumesBitForBit: 150 steps lower the loss;
// a run interrupted at step 12 and resumed from its checkpoint ends with
// exactly the parameters of the uninterrupted run (#23 acceptance).
func TestPretrainLowersTheLossAndResumesBitForBit(t *testing.T) {
	g, init := openTestGraphs(t, "mlp")
	dir := t.TempDir()
	full := testRun(t, g, dir, 150)
	var first, losses []float64
	full.Progress = func(step, _ int, l Loss) {
		if step <= 10 {
			first = append(first, l.Total)
		}
		losses = append(losses, l.Total)
	}
	want, err := full.Drive(context.Background(), clone(init), false)
	if err != nil {
		t.Fatal(err)
	}
	mean := func(v []float64) (s float64) {
		for _, x := range v {
			s += x / float64(len(v))
		}
		return
	}
	if a, b := mean(first), full.Last.Total; !(b < a-0.1) {
		t.Errorf("loss %.3f over the first 10 steps, %.3f over the last 50: not lower", a, b)
	}
	// Interrupted after step 12, then resumed.
	ctx, cancel := context.WithCancel(context.Background())
	part := testRun(t, g, dir, 150)
	part.Progress = func(step, _ int, _ Loss) {
		if step == 12 {
			cancel()
		}
	}
	if _, err := part.Drive(ctx, clone(init), false); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interrupted run: %v", err)
	}
	rest := testRun(t, g, dir, 150)
	got, err := rest.Drive(context.Background(), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("parameter %s differs after the resume", g.Params[i].Name)
		}
	}
	// Another configuration cannot resume the checkpoint.
	other := testRun(t, g, dir, 150)
	other.Settings += " lr=2"
	if _, err := other.Drive(context.Background(), nil, true); err == nil {
		t.Error("a run of other settings resumed the checkpoint")
	}
}
