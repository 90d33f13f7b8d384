package pretrain

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/dpfeat/dpfeat/finetune"
	"github.com/dpfeat/dpfeat/internal/orttest"
)

func openTestGraphs(t *testing.T, name string) (*Graphs, [][]float32) {
	t.Helper()
	orttest.Need(t)
	dir := filepath.Join("..", "testdata", "training")
	g, err := Open(filepath.Join(dir, name+"-embed.onnx"), filepath.Join(dir, name+"-vjp.onnx"), finetune.GraphOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	// The whole model's parameters: the head's are carried, not trained.
	params, _, _, err := finetune.ReadParams(filepath.Join(dir, name+".safetensors"), g.Params, true)
	if err != nil {
		t.Fatal(err)
	}
	return g, params
}

// TestVJPMatchesFiniteDifferences checks the test models' vector–Jacobian
// product graphs against central differences of s(θ) = Σ_i g_i·embed(θ)_i
// through their embedding graphs, coordinate by coordinate (float32:
// h = 1e-3).
func TestVJPMatchesFiniteDifferences(t *testing.T) {
	for _, name := range []string{"mlp", "cnn"} {
		g, params := openTestGraphs(t, name)
		const n = 3
		r := rand.New(rand.NewPCG(7, 7))
		images := make([]float32, n*g.ImageSize())
		for i := range images {
			images[i] = float32(r.NormFloat64())
		}
		ge := make([]float32, n*g.Dim)
		for i := range ge {
			ge[i] = float32(r.NormFloat64())
		}
		grads := make([][]float32, len(g.Params))
		for i, p := range g.Params {
			grads[i] = make([]float32, p.Size)
		}
		if err := g.VJP(params, images, ge, n, grads); err != nil {
			t.Fatal(err)
		}
		emb := make([]float32, n*g.Dim)
		s := func(pi, k int, delta float32) float64 {
			old := params[pi][k]
			params[pi][k] = old + delta
			defer func() { params[pi][k] = old }()
			if err := g.Embed(params, images, n, emb); err != nil {
				t.Fatal(err)
			}
			var v float64
			for i, e := range emb {
				v += float64(ge[i]) * float64(e)
			}
			return v
		}
		const h = 1e-3
		checked := 0
		for pi, p := range g.Params {
			for k := 0; k < p.Size; k += max(1, p.Size/30) {
				fd := (s(pi, k, h) - s(pi, k, -h)) / (2 * h)
				if got := float64(grads[pi][k]); math.Abs(fd-got) > 3e-3+1e-2*math.Abs(got) {
					t.Errorf("%s: ∂s/∂%s[%d] = %v, finite difference %v", name, p.Name, k, got, fd)
				}
				checked++
			}
		}
		if checked < 20 {
			t.Errorf("%s: only %d coordinates checked", name, checked)
		}
	}
}
