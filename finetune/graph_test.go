package finetune

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpfeat/dpfeat/internal/orttest"
)

func openTestGraph(t *testing.T, name string) (*Graph, [][]float32) {
	t.Helper()
	orttest.Need(t)
	g, err := OpenGraph(filepath.Join("..", "testdata", "training", name+".onnx"), GraphOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	params, err := LoadParams(filepath.Join("..", "testdata", "training", name+".safetensors"), g)
	if err != nil {
		t.Fatal(err)
	}
	return g, params
}

// TestGraphGradientsMatchFiniteDifferences checks the test graphs'
// per-example gradients against central differences of their per-example
// losses, coordinate by coordinate (float32: h = 1e-3).
func TestGraphGradientsMatchFiniteDifferences(t *testing.T) {
	for _, c := range []struct {
		name    string
		classes int
	}{{"mlp", 3}, {"cnn", 4}} {
		g, params := openTestGraph(t, c.name)
		const n = 4
		r := rand.New(rand.NewPCG(5, 5))
		images := make([]float32, n*g.ImageSize())
		for i := range images {
			images[i] = float32(r.NormFloat64())
		}
		labels := make([]int64, n)
		for i := range labels {
			labels[i] = int64(r.IntN(c.classes))
		}
		grads := make([][]float32, len(g.Params))
		scratch := make([][]float32, len(g.Params))
		for i, p := range g.Params {
			grads[i] = make([]float32, n*p.Size)
			scratch[i] = make([]float32, n*p.Size)
		}
		loss := make([]float32, n)
		if err := g.Run(params, images, labels, n, grads, loss); err != nil {
			t.Fatal(err)
		}
		lossAt := func(pi, k int, delta float32) []float32 {
			old := params[pi][k]
			params[pi][k] = old + delta
			defer func() { params[pi][k] = old }()
			l := make([]float32, n)
			if err := g.Run(params, images, labels, n, scratch, l); err != nil {
				t.Fatal(err)
			}
			return l
		}
		const h = 1e-3
		checked := 0
		for pi, p := range g.Params {
			for k := 0; k < p.Size; k += max(1, p.Size/40) {
				up, down := lossAt(pi, k, h), lossAt(pi, k, -h)
				for i := 0; i < n; i++ {
					fd := float64(up[i]-down[i]) / (2 * h)
					got := float64(grads[pi][i*p.Size+k])
					if math.Abs(fd-got) > 2e-3+1e-2*math.Abs(got) {
						t.Errorf("%s: d loss_%d / d %s[%d] = %v, finite difference %v", c.name, i, p.Name, k, got, fd)
					}
				}
				checked++
			}
		}
		if checked < 20 {
			t.Errorf("%s: only %d coordinates checked", c.name, checked)
		}
	}
}

func TestGraphContractErrors(t *testing.T) {
	orttest.Need(t)
	// An encoder is not a training graph.
	_, err := OpenGraph(filepath.Join("..", "testdata", "encoders", "tiny-cnn.onnx"), GraphOptions{Threads: 1})
	if err == nil {
		t.Fatal("an encoder opened as a training graph")
	}
	g, _ := openTestGraph(t, "mlp")
	bad := filepath.Join(t.TempDir(), "p.safetensors")
	os.WriteFile(bad, []byte("not safetensors"), 0o644)
	if _, err := LoadParams(bad, g); err == nil {
		t.Error("bad parameters file accepted")
	}
	if _, err := LoadParams(filepath.Join("..", "testdata", "training", "cnn.safetensors"), g); err == nil {
		t.Error("another graph's parameters accepted")
	}
}
