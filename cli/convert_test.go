package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

// Every input format fits the same classifier as the Arrow file it was
// converted from (with --seed), and eval and predict read it too (#20).
func TestEveryFeatureFormatFitsTheSameClassifier(t *testing.T) {
	dir := t.TempDir()
	classes := []string{"ant", "bee", "cow"}
	train, test := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow")
	blobFile(t, train, 300, 6, classes, "sha-1", 1)
	blobFile(t, test, 60, 6, classes, "sha-1", 2)
	fit := func(in string, extra ...string) *models.Classifier {
		t.Helper()
		out := filepath.Join(dir, filepath.Base(in)+".safetensors")
		args := append([]string{"fit", "--method", "dpls", "--train", in, "--epsilon", "1", "--delta", "1e-5", "--seed", "3", "--out", out}, extra...)
		if code, _, errs := run(t, args...); code != 0 {
			t.Fatalf("fit %s: %s", in, errs)
		}
		clf, err := models.LoadClassifier(out)
		if err != nil {
			t.Fatal(err)
		}
		return clf
	}
	ref := fit(train)
	for _, tc := range []struct {
		ext   string
		extra []string
	}{
		{".parquet", nil},
		{".npz", nil},
		{".csv", []string{"--classes", "ant,bee,cow"}}, // a CSV holds no class order
		{".tsv", []string{"--classes", "ant,bee,cow"}},
		{".npy", []string{"--classes", "ant,bee,cow", "--labels", filepath.Join(dir, "labels.txt")}}, // the matrix alone
	} {
		t.Run(tc.ext, func(t *testing.T) {
			conv := filepath.Join(dir, "train"+tc.ext)
			if code, _, errs := run(t, "convert", "--in", train, "--out", conv); code != 0 {
				t.Fatal(errs)
			}
			if tc.ext == ".npy" {
				m, _ := features.ReadAll(train, features.ReadOptions{})
				var lines []string
				for _, l := range m.Labels {
					lines = append(lines, classes[l])
				}
				os.WriteFile(filepath.Join(dir, "labels.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
			}
			if code, out, errs := run(t, append([]string{"inspect", "--json"}, append(tc.extra, conv)...)...); code != 0 || !strings.Contains(out, `"rows": 300`) {
				t.Errorf("inspect %s: exit %d, %s %s", conv, code, out, errs)
			}
			clf := fit(conv, tc.extra...)
			if !slices.Equal(clf.Weight, ref.Weight) || !slices.Equal(clf.Bias, ref.Bias) || !slices.Equal(clf.Classes, classes) {
				t.Errorf("%s: the classifier differs from the Arrow file's", tc.ext)
			}
			if tc.ext == ".npy" {
				return // a test set of features alone has nothing to evaluate
			}
			// eval reads the test set in the same format, labels mapped to
			// the classifier's classes by name.
			testConv := filepath.Join(dir, "test"+tc.ext)
			if code, _, errs := run(t, "convert", "--in", test, "--out", testConv); code != 0 {
				t.Fatal(errs)
			}
			_, want, _ := run(t, "eval", "--classifier", filepath.Join(dir, "train.arrow.safetensors"), "--test", test, "--json")
			_, got, errs := run(t, "eval", "--classifier", filepath.Join(dir, "train.arrow.safetensors"), "--test", testConv, "--json")
			if got != want {
				t.Errorf("eval on %s: %s (%s), want %s", tc.ext, got, errs, want)
			}
		})
	}
}

// A file whose class list comes from its label values says so, and the
// guarantee lists the class list as assumed public; --classes removes it.
func TestClassesFromLabelsAreListedAsPublic(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.arrow")
	blobFile(t, train, 200, 4, []string{"x", "y"}, "sha-1", 1)
	csv := filepath.Join(dir, "train.csv")
	if code, _, errs := run(t, "convert", "--in", train, "--out", csv); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := run(t, "fit", "--method", "dpls", "--train", csv, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, "a.safetensors"))
	if code != 0 {
		t.Fatal(errs)
	}
	if !strings.Contains(errs, "2 classes from the label values (x, y), assumed public: --classes fixes them") {
		t.Errorf("stderr %q does not say where the classes came from", errs)
	}
	if !strings.Contains(out, "the class list, taken from the label values of "+csv) {
		t.Errorf("the guarantee does not list the class list as public:\n%s", out)
	}
	_, out, errs = run(t, "fit", "--method", "dpls", "--train", csv, "--classes", "x,y", "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, "b.safetensors"))
	if strings.Contains(out, "taken from the label values") || strings.Contains(errs, "assumed public") {
		t.Errorf("with --classes, the class list is still called data-derived:\n%s\n%s", out, errs)
	}
}

func TestConvertAndPredictFormats(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.arrow")
	blobFile(t, train, 200, 4, []string{"x", "y"}, "sha-1", 1)
	clf := filepath.Join(dir, "c.safetensors")
	if code, _, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", clf); code != 0 {
		t.Fatal(errs)
	}
	pred := filepath.Join(dir, "p.arrow")
	if code, _, errs := run(t, "predict", "--classifier", clf, "--features", train, "--out", pred); code != 0 {
		t.Fatal(errs)
	}
	ref, err := features.ReadPredictions(pred)
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".csv", ".parquet", ".npy", ".npz"} {
		direct, conv := filepath.Join(dir, "direct"+ext), filepath.Join(dir, "conv"+ext)
		if code, _, errs := run(t, "predict", "--classifier", clf, "--features", train, "--out", direct); code != 0 {
			t.Fatal(errs)
		}
		if code, _, errs := run(t, "convert", "--in", pred, "--out", conv); code != 0 {
			t.Fatal(errs)
		}
		a, _ := os.ReadFile(direct)
		b, _ := os.ReadFile(conv)
		if ext != ".parquet" && string(a) != string(b) {
			t.Errorf("%s: predict --out and convert write different files", ext)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "direct.csv"))
	if lines := strings.Count(string(csv), "\n"); lines != len(ref.Predicted)+1 {
		t.Errorf("predictions CSV has %d lines for %d rows", lines, len(ref.Predicted))
	}
	// An existing output is kept without --force; bad input names the flag.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"convert", "--in", train, "--out", filepath.Join(dir, "conv.csv")}, "exists: pass --force"},
		{[]string{"convert", "--in", train, "--out", train}, "same file"},
		{[]string{"convert", "--in", filepath.Join(dir, "nope.csv"), "--out", filepath.Join(dir, "z.csv")}, "nope.csv"},
		{[]string{"fit", "--method", "dpls", "--train", filepath.Join(dir, "direct.csv"), "--classes", "x,x", "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, "z.safetensors")}, `--classes: class name "x" appears twice`},
	} {
		code, _, errs := run(t, tc.args...)
		if code != 1 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want one line with %q", tc.args, code, errs, tc.want)
		}
	}
}

// A sweep over CSV files reads the test file with the training file's
// classes: a class the test file lacks does not shift the others.
func TestSweepOverForeignFiles(t *testing.T) {
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow")
	blobFile(t, train, 300, 4, []string{"ant", "bee", "cow"}, "sha-1", 1)
	blobFile(t, test, 90, 4, []string{"ant", "bee", "cow"}, "sha-1", 2)
	for _, f := range []string{"train", "test"} {
		if code, _, errs := run(t, "convert", "--in", filepath.Join(dir, f+".arrow"), "--out", filepath.Join(dir, f+".csv")); code != 0 {
			t.Fatal(errs)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "test.csv"))
	var kept []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(line, "cow,") && !strings.Contains(line, ",cow,") {
			kept = append(kept, line)
		}
	}
	os.WriteFile(filepath.Join(dir, "test.csv"), []byte(strings.Join(kept, "\n")+"\n"), 0o644)
	cfg := filepath.Join(dir, "s.yaml")
	os.WriteFile(cfg, []byte("datasets: [{train: train.csv, test: test.csv}]\nmethods: {ls: {}}\nepsilons: [1]\ndelta: 1e-5\nseeds: 1\n"), 0o644)
	code, out, errs := run(t, "sweep", "--config", cfg, "--out", filepath.Join(dir, "r.arrow"))
	if code != 0 || !strings.Contains(out, "| ls |") {
		t.Fatalf("sweep over CSV files: exit %d\n%s\n%s", code, out, errs)
	}
	// classes: in the configuration fixes the list (and its order), as
	// fit --classes does; the private rows' guarantee then lists no
	// data-derived class list.
	os.WriteFile(cfg, []byte("datasets: [{train: train.csv, test: test.csv, classes: [cow, bee, ant]}]\nmethods: {dpls: {}}\nepsilons: [1]\ndelta: 1e-5\nseeds: 1\n"), 0o644)
	results := filepath.Join(dir, "r2.arrow")
	if code, out, errs := run(t, "sweep", "--config", cfg, "--out", results); code != 0 {
		t.Fatalf("sweep with classes: exit %d\n%s\n%s", code, out, errs)
	}
	_, js, _ := run(t, "export", "--results", results, "--format", "json", "--out", "-")
	if strings.Contains(js, "taken from the label values") || !strings.Contains(js, "dpls") {
		t.Errorf("with classes: the job's guarantee still calls the class list data-derived:\n%s", js)
	}
	os.WriteFile(cfg, []byte("datasets: [{train: train.csv, test: test.csv, classes: [cow, cow]}]\nmethods: {dpls: {}}\nepsilons: [1]\ndelta: 1e-5\nseeds: 1\n"), 0o644)
	if code, _, errs := run(t, "sweep", "--config", cfg, "--out", filepath.Join(dir, "r3.arrow")); code != 1 || !strings.Contains(errs, "datasets[0]: classes") {
		t.Errorf("duplicate classes: exit %d, %q", code, errs)
	}
}
