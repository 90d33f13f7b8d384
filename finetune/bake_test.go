//go:build cgo

package finetune

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
)

// runForward runs a forward graph on images, with the parameters as
// inputs (unbaked) or none (baked), and returns the logits.
func runForward(t *testing.T, path string, g *Graph, params [][]float32, images []float32, n, classes int) []float32 {
	t.Helper()
	var names []string
	var ins []ort.Value
	for i, p := range g.Params {
		if params == nil {
			break
		}
		v, err := ort.NewTensor(ort.NewShape(p.Shape...), params[i])
		if err != nil {
			t.Fatal(err)
		}
		defer v.Destroy()
		names, ins = append(names, p.Name), append(ins, v)
	}
	img, err := ort.NewTensor(ort.NewShape(append([]int64{int64(n)}, g.ImageShape...)...), images)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Destroy()
	logits := make([]float32, n*classes)
	out, err := ort.NewTensor(ort.NewShape(int64(n), int64(classes)), logits)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Destroy()
	s, err := ort.NewDynamicAdvancedSession(path, append(names, "images"), []string{"logits"}, nil)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer s.Destroy()
	if err := s.Run(append(ins, img), []ort.Value{out}); err != nil {
		t.Fatal(err)
	}
	return logits
}

// TestBakeMakesAStandaloneModel: the forward graph with trained parameters
// baked in takes only images, gives the logits the unbaked graph gives with
// the parameters as inputs — whose cross-entropy is the training graph's
// loss — and carries the metadata.
func TestBakeMakesAStandaloneModel(t *testing.T) {
	g, params := openTestGraph(t, "mlp")
	for i := range params { // "trained": not the initial values
		for k := range params[i] {
			params[i][k] += 0.01 * float32(k%7)
		}
	}
	d := testData(g, 6, 3, 8)
	fwd := filepath.Join("..", "testdata", "training", "mlp-forward.onnx")
	raw, err := os.ReadFile(fwd)
	if err != nil {
		t.Fatal(err)
	}
	ts := map[string]Tensor{}
	for i, p := range g.Params {
		ts[p.Name] = Tensor{Shape: p.Shape, Data: params[i]}
	}
	baked, err := Bake(raw, ts, map[string]string{"dpfeat.privacy": "(ε = 1, δ = 1e-5)-DP"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "baked.onnx")
	os.WriteFile(path, baked, 0o644)
	want := runForward(t, fwd, g, params, d.Images, d.N, 3)
	got := runForward(t, path, g, nil, d.Images, d.N, 3)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("logit %d: baked %v, unbaked %v", i, got[i], want[i])
		}
	}
	grads := make([][]float32, len(g.Params))
	for i, p := range g.Params {
		grads[i] = make([]float32, d.N*p.Size)
	}
	loss := make([]float32, d.N)
	if err := g.Run(params, d.Images, d.Labels, d.N, grads, loss); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < d.N; i++ {
		z := want[i*3 : i*3+3]
		lse := math.Log(math.Exp(float64(z[0])) + math.Exp(float64(z[1])) + math.Exp(float64(z[2])))
		if ce := lse - float64(z[d.Labels[i]]); math.Abs(ce-float64(loss[i])) > 1e-5 {
			t.Errorf("example %d: cross-entropy of the logits %v, training graph's loss %v", i, ce, loss[i])
		}
	}
	md, err := ort.GetModelMetadata(path)
	if err != nil {
		t.Fatal(err)
	}
	defer md.Destroy()
	if v, ok, err := md.LookupCustomMetadataMap("dpfeat.privacy"); err != nil || !ok || v != "(ε = 1, δ = 1e-5)-DP" {
		t.Errorf("metadata: %q %v %v", v, ok, err)
	}
	if _, err := Bake(raw, map[string]Tensor{"nope": {Shape: []int64{1}, Data: []float32{1}}}, nil); err == nil {
		t.Error("baking a parameter the graph does not have")
	}
	if _, err := Bake([]byte("not onnx"), ts, nil); err == nil {
		t.Error("baking garbage")
	}
}
