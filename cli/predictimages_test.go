//go:build cgo

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/orttest"
)

// predict --encoder --data gives what extract then predict give, keeps
// nothing unless asked, and reads a flat folder of unlabeled images (#20).
func TestPredictFromImages(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "images")
	imageFolder(t, data, []string{"cat", "dog"}, 6)
	model := "../testdata/encoders/tiny-cnn.onnx"
	feats, clf := filepath.Join(dir, "f.arrow"), filepath.Join(dir, "c.safetensors")
	if code, _, errs := run(t, "extract", "--encoder", model, "--data", data, "--out", feats, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := run(t, "fit", "--method", "dpls", "--train", feats, "--epsilon", "1", "--delta", "1e-5", "--out", clf); code != 0 {
		t.Fatal(errs)
	}
	want := filepath.Join(dir, "want.csv")
	if code, _, errs := run(t, "predict", "--classifier", clf, "--features", feats, "--out", want); code != 0 {
		t.Fatal(errs)
	}
	tmpBefore, _ := filepath.Glob(filepath.Join(os.TempDir(), "dpfeat-predict-*"))
	got := filepath.Join(dir, "got.csv")
	if code, _, errs := run(t, "predict", "--classifier", clf, "--encoder", model, "--data", data, "--out", got, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	a, _ := os.ReadFile(want)
	b, _ := os.ReadFile(got)
	if string(a) != string(b) || len(a) == 0 {
		t.Errorf("predict from images:\n%s\nwant (extract, then predict):\n%s", b, a)
	}
	if tmpAfter, _ := filepath.Glob(filepath.Join(os.TempDir(), "dpfeat-predict-*")); len(tmpAfter) != len(tmpBefore) {
		t.Errorf("predict left %v behind", tmpAfter)
	}
	// --save-features keeps them, equal to extract's.
	saved := filepath.Join(dir, "saved.arrow")
	if code, _, errs := run(t, "predict", "--classifier", clf, "--encoder", model, "--data", data, "--out", filepath.Join(dir, "p2.arrow"), "--save-features", saved, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	x, _ := features.ReadAll(feats, features.ReadOptions{})
	y, err := features.ReadAll(saved, features.ReadOptions{})
	if err != nil || len(x.Data) != len(y.Data) || strings.Join(x.IDs, ",") != strings.Join(y.IDs, ",") {
		t.Fatalf("saved features differ: %v", err)
	}
	for i := range x.Data {
		if x.Data[i] != y.Data[i] {
			t.Fatalf("saved feature %d: %v, want %v", i, y.Data[i], x.Data[i])
		}
	}
	// A flat folder of unlabeled images.
	flat := filepath.Join(dir, "flat")
	os.MkdirAll(flat, 0o755)
	for _, f := range []string{"a.png", "b.png"} {
		src, _ := os.ReadFile(filepath.Join(data, "dog", f))
		os.WriteFile(filepath.Join(flat, f), src, 0o644)
	}
	code, out, errs := run(t, "predict", "--classifier", clf, "--encoder", model, "--data", flat, "--out", filepath.Join(dir, "flat.csv"), "--quiet")
	if code != 0 || !strings.Contains(out, "2 predictions over 2 classes") {
		t.Fatalf("flat folder: exit %d, %s %s", code, out, errs)
	}
	// Bad combinations name the flags.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--classifier", clf, "--encoder", model, "--out", filepath.Join(dir, "x.csv")}, "--encoder and --data go together"},
		{[]string{"predict", "--classifier", clf, "--encoder", model, "--data", data, "--features", feats, "--out", filepath.Join(dir, "x.csv")}, "not both"},
		{[]string{"predict", "--classifier", clf, "--features", feats, "--save-features", saved, "--out", filepath.Join(dir, "x.csv")}, "--save-features keeps"},
		{[]string{"predict", "--classifier", clf, "--encoder", model, "--data", data, "--save-features", saved, "--out", filepath.Join(dir, "x.csv")}, "exists"},
	} {
		if code, _, errs := run(t, tc.args...); code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %q; want %q", tc.args[3:], code, errs, tc.want)
		}
	}
}
