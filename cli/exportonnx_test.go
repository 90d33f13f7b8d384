//go:build cgo

package cli

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/orttest"
	"github.com/dpfeat/dpfeat/models"
)

// runModel runs an ONNX file on one float32 input and returns "scores".
func runModel(t *testing.T, path, input string, x []float32, shape ...int64) []float32 {
	t.Helper()
	model, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return orttest.Run(t, model, input, x, shape, "scores")[0].([]float32)
}

// TestExportONNXEveryMethod fits every method on features of the demo
// encoder, exports the head alone and fused with the encoder, and checks
// both through ONNX Runtime against dpfeat predict's scores.
func TestExportONNXEveryMethod(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "images")
	imageFolder(t, data, []string{"cat", "dog", "owl"}, 6)
	model := "../models/demo/fmnist-cnn.onnx"
	feats := filepath.Join(dir, "f.arrow")
	if code, _, errs := run(t, "extract", "--encoder", model, "--data", data, "--out", feats); code != 0 {
		t.Fatalf("extract: exit %d: %s", code, errs)
	}
	// Public features of other images (the training file itself is
	// refused as public data).
	pub := filepath.Join(dir, "pub.arrow")
	imageFolderVariant(t, filepath.Join(dir, "public"), []string{"cat", "dog", "owl"}, 6, 1)
	if code, _, errs := run(t, "extract", "--encoder", model, "--data", filepath.Join(dir, "public"), "--out", pub); code != 0 {
		t.Fatalf("extract the public images: exit %d: %s", code, errs)
	}
	m, err := features.ReadAll(feats, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The encoder's input tensors, as extract prepared them.
	man, _, err := models.ManifestFor(model)
	if err != nil {
		t.Fatal(err)
	}
	prep := encode.NewPreprocessor(man.Input)
	ds, err := features.OpenDataset(data, features.DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tensors []float32
	for i := 0; i < m.Rows; i++ {
		ex, err := ds.Next()
		if err != nil {
			t.Fatal(err)
		}
		px, err := features.DecodeImage(ex)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, prep.Size())
		if err := prep.Apply(px, x); err != nil {
			t.Fatal(err)
		}
		tensors = append(tensors, x...)
	}
	ds.Close()
	in := man.Input
	for _, fit := range [][]string{
		{"dpls", "1"}, {"dpnewton", "1"}, {"dpfc", "1"}, {"dpsgd", "1"}, {"dplp", "1"},
		{"dpplmean", "1"}, {"dpplmean", "1", "--distance", "euclidean"},
		{"dpplpublic", "1", "--public", pub}, {"dpplpublick", "1", "--public", pub, "--param", "k=2"},
		{"dpls", "1", "--transform", "pca", "--public", pub}, {"auto", "1"},
		{"ls", "inf"}, {"newton", "inf"}, {"logreg", "inf"}, {"protomean", "inf"},
	} {
		name := strings.Join(fit, " ")
		t.Run(name, func(t *testing.T) {
			clf := filepath.Join(dir, "clf.safetensors")
			args := []string{"fit", "--method", fit[0], "--train", feats, "--epsilon", fit[1], "--out", clf, "--seed", "1", "--force"}
			if fit[1] != "inf" {
				args = append(args, "--delta", "1e-5")
			}
			args = append(args, fit[2:]...)
			os.Remove(clf)
			if code, _, errs := run(t, args...); code != 0 {
				t.Fatalf("fit: exit %d: %s", code, errs)
			}
			c, err := models.LoadClassifier(clf)
			if err != nil {
				t.Fatal(err)
			}
			_, want := c.Predict(m)
			head, fused := filepath.Join(dir, "head.onnx"), filepath.Join(dir, "fused.onnx")
			if code, _, errs := run(t, "export-onnx", "--classifier", clf, "--out", head, "--force"); code != 0 {
				t.Fatalf("export-onnx: exit %d: %s", code, errs)
			}
			if code, _, errs := run(t, "export-onnx", "--classifier", clf, "--encoder", model, "--input", "encoder", "--out", fused, "--force"); code != 0 {
				t.Fatalf("export-onnx --encoder: exit %d: %s", code, errs)
			}
			for _, got := range [][]float32{
				runModel(t, head, "features", m.Data, int64(m.Rows), int64(m.Dim)),
				runModel(t, fused, in.Name, tensors, int64(m.Rows), int64(in.Channels), int64(in.Height), int64(in.Width)),
			} {
				worst := 0.0
				for i := range want {
					worst = math.Max(worst, math.Abs(float64(want[i]-got[i])))
				}
				if worst > 1e-5 {
					t.Errorf("max |score difference| %.2g > 1e-5", worst)
				}
				t.Logf("max |score difference| %.1e", worst)
			}
		})
	}
	// Bad input: one line, nothing written.
	clf := filepath.Join(dir, "clf.safetensors")
	out := filepath.Join(dir, "x.onnx")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--classifier", clf, "--out", filepath.Join(dir, "head.onnx")}, "exists: pass --force"},
		{[]string{"--classifier", clf, "--input", "pixels", "--out", out}, "give --encoder"},
		{[]string{"--classifier", clf, "--encoder", model, "--input", "rgb", "--out", out}, `--input "rgb"`},
		{[]string{"--classifier", feats, "--out", out}, "not a safetensors file"},
		{[]string{"--classifier", clf, "--encoder", "../testdata/encoders/tiny-cnn.onnx", "--out", out}, "fitted on features of encoder"},
	} {
		code, _, errs := run(t, append([]string{"export-onnx"}, c.args...)...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want 1 and %q", c.args, code, errs, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v wrote %s", c.args, out)
		}
	}
}
