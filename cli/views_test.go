package cli

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/solvers"
)

// viewsFile writes a training file of 60 examples of two classes, k rows
// each (a multi-view file when views, else one row per example and k must
// be 1); scatter interleaves the examples' rows.
func viewsFile(t *testing.T, path string, k int, views, scatter bool) {
	t.Helper()
	b := features.Batch{Dim: 3}
	type row struct {
		x  []float32
		y  int32
		ex string
	}
	var rows []row
	for e := 0; e < 60; e++ {
		for v := 0; v < k; v++ {
			rows = append(rows, row{[]float32{float32(e%2) + 0.1*float32(v), float32(v) - 0.5, float32(e%5) * 0.2}, int32(e % 2), fmt.Sprintf("img-%02d", e)})
		}
	}
	if scatter {
		// view v of every example, then view v+1 of every example
		slices.SortStableFunc(rows, func(a, b row) int { return int(a.x[1]*10) - int(b.x[1]*10) })
	}
	for _, r := range rows {
		b.Features = append(b.Features, r.x...)
		b.Labels = append(b.Labels, r.y)
		if views {
			b.Examples = append(b.Examples, r.ex)
		}
	}
	meta := features.Metadata{Classes: []string{"a", "b"}}
	if views {
		meta.Views = &features.Views{Views: k, Augment: "flip"}
	}
	// Record batches of 50 rows: an example's views cross batches.
	var parts []features.Batch
	for lo := 0; lo < len(b.Labels); lo += 50 {
		hi := min(lo+50, len(b.Labels))
		p := features.Batch{Dim: 3, Features: b.Features[lo*3 : hi*3], Labels: b.Labels[lo:hi]}
		if views {
			p.Examples = b.Examples[lo:hi]
		}
		parts = append(parts, p)
	}
	if err := features.WriteFile(path, meta, features.WriterOptions{}, parts...); err != nil {
		t.Fatal(err)
	}
}

// fitOn runs fit --method m on train into out with the given flags; a
// private method gets the budget private (its --epsilon and --delta), a
// non-private one --epsilon inf. On success it returns the classifier;
// either way the exit code and output.
func fitOn(t *testing.T, m, train, out string, private []string, extra ...string) (clf *models.Classifier, code int, stdout, stderr string) {
	t.Helper()
	method, err := solvers.Lookup(m)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"fit", "--method", m, "--train", train, "--out", out}
	if method.Private {
		args = append(args, private...)
	} else {
		args = append(args, "--epsilon", "inf")
	}
	code, stdout, stderr = run(t, append(args, extra...)...)
	if code != 0 {
		return nil, code, stdout, stderr
	}
	if clf, err = models.LoadClassifier(out); err != nil {
		t.Fatal(err)
	}
	return clf, code, stdout, stderr
}

// TestMultiViewTrainingFiles (#22): every method fits a multi-view file,
// an example's views grouped wherever they lie in the file; a file of one
// view per example fits the single-view classifier bit for bit (--seed);
// n and the stored class counts count examples; the guarantee names the
// privacy unit; split keeps an example's views together.
func TestMultiViewTrainingFiles(t *testing.T) {
	dir := t.TempDir()
	single, k1 := filepath.Join(dir, "single.arrow"), filepath.Join(dir, "k1.arrow")
	k4, k4s := filepath.Join(dir, "k4.arrow"), filepath.Join(dir, "k4s.arrow")
	viewsFile(t, single, 1, false, false)
	viewsFile(t, k1, 1, true, false)
	viewsFile(t, k4, 4, true, false)
	viewsFile(t, k4s, 4, true, true)
	fit := func(m, train, name string, extra ...string) *models.Classifier {
		t.Helper()
		clf, code, _, errs := fitOn(t, m, train, filepath.Join(dir, name+".safetensors"), []string{"--epsilon", "1", "--delta", "1e-5"},
			append([]string{"--seed", "3", "--public-counts"}, extra...)...)
		if code != 0 {
			t.Fatalf("fit %s on %s: exit %d, %s", m, train, code, errs)
		}
		return clf
	}
	pub := filepath.Join(dir, "public.arrow") // (not the training data, which is refused as public)
	blobFile(t, pub, 40, 3, []string{"a", "b"}, "", 5)
	for _, m := range []string{"dpls", "dpfc", "dpsgd", "dpplmean", "dplp", "dpnewton", "auto", "ls", "logreg", "dpplpublic"} {
		var extra []string
		if m == "dpplpublic" {
			extra = []string{"--public", pub}
		}
		ref := fit(m, single, m+"-single", extra...)
		one := fit(m, k1, m+"-k1", extra...)
		if !slices.Equal(one.Weight, ref.Weight) || !slices.Equal(one.Bias, ref.Bias) {
			t.Errorf("%s: one view per example fits another classifier than the single-view file", m)
		}
		four := fit(m, k4, m+"-k4", extra...)
		if four.TrainRows != 60 || !slices.Equal(four.TrainCounts, []int64{30, 30}) {
			t.Errorf("%s: 4 views per example: train_rows %d, counts %v; want 60 examples, 30 + 30", m, four.TrainRows, four.TrainCounts)
		}
		if private := four.Guarantee.Accountant != "none"; private && !strings.Contains(four.Guarantee.Unit, "privacy unit: the example, as 4 augmented views (flip)") {
			t.Errorf("%s: guarantee unit %q", m, four.Guarantee.Unit)
		}
		scattered := fit(m, k4s, m+"-k4s", extra...)
		if m == "dpsgd" || m == "dplp" {
			// In memory the grouped rows are the same, in the same order.
			if !slices.Equal(scattered.Weight, four.Weight) {
				t.Errorf("%s: scattered views fit another classifier than grouped ones", m)
			}
		}
	}
	if code, _, errs := run(t, "inspect", k4s); code != 0 || !strings.Contains(errs, "is multi-view: 60 examples, 4 views") {
		t.Errorf("inspect: exit %d, %q", code, errs)
	}
	cfg := filepath.Join(dir, "s.yaml")
	os.WriteFile(cfg, []byte("datasets: [{train: k4s.arrow, test: k4.arrow}]\nmethods: {dpls: {}, dpsgd: {}}\nepsilons: [1]\ndelta: 1e-5\n"), 0o644)
	if code, _, errs := run(t, "sweep", "--config", cfg, "--out", filepath.Join(dir, "r.arrow")); code != 0 {
		t.Errorf("sweep on a multi-view file: exit %d, %q", code, errs)
	}
	tr, va := filepath.Join(dir, "tr.arrow"), filepath.Join(dir, "va.arrow")
	if code, _, errs := run(t, "split", "--in", k4s, "--train", tr, "--val", va, "--val-fraction", "0.3"); code != 0 {
		t.Fatal(errs)
	}
	seen := map[string]string{}
	for _, part := range []string{tr, va} {
		m, err := features.ReadAll(part, features.ReadOptions{})
		if err != nil || m.Meta.Views == nil {
			t.Fatalf("%s: %v, views %v", part, err, m.Meta.Views)
		}
		for _, e := range m.Examples {
			if s, ok := seen[e]; ok && s != part {
				t.Fatalf("example %s in both parts of the split", e)
			}
			seen[e] = part
		}
	}
	if code, _, errs := run(t, "convert", "--in", k4, "--out", filepath.Join(dir, "mv.csv")); code != 1 || !strings.Contains(errs, "multi-view") {
		t.Errorf("convert to CSV: exit %d, %q", code, errs)
	}
	// An example's views must share its label.
	bad := filepath.Join(dir, "bad.arrow")
	b := features.Batch{Dim: 1, Features: []float32{1, 2, 3}, Labels: []int32{0, 1, 1}, Examples: []string{"a", "a", "b"}}
	if err := features.WriteFile(bad, features.Metadata{Classes: []string{"a", "b"}, Views: &features.Views{Views: 2, Augment: "flip"}}, features.WriterOptions{}, b); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, "fit", "--method", "dpls", "--train", bad, "--out", filepath.Join(dir, "bad.safetensors"), "--epsilon", "1", "--delta", "1e-5"); code != 1 || !strings.Contains(errs, "row 1 has label 1") {
		t.Errorf("views of one example with different labels: exit %d, %q", code, errs)
	}
}

// softFile writes a multi-view training file of 60 examples of two
// classes: two views each and, for every other example, a mixup with a
// public image of the other class (mix_label, λ); scatter puts each
// example's mixup after every example's views.
func softFile(t *testing.T, path string, scatter bool) {
	t.Helper()
	b := features.Batch{Dim: 3}
	var later features.Batch
	for e := 0; e < 60; e++ {
		y, ex := int32(e%2), fmt.Sprintf("img-%02d", e)
		for v := 0; v < 2; v++ {
			b.Features = append(b.Features, float32(y)+0.1*float32(v), float32(v)-0.5, float32(e%5)*0.2)
			b.Labels, b.Examples = append(b.Labels, y), append(b.Examples, ex)
			b.MixLabels, b.MixLambdas = append(b.MixLabels, features.Unlabeled), append(b.MixLambdas, 0)
		}
		if e%2 == 0 {
			to := &b
			if scatter {
				to = &later
			}
			to.Features = append(to.Features, 0.7*float32(y)+0.3*float32(1-y), 0.2, float32(e%5)*0.2)
			to.Labels, to.Examples = append(to.Labels, y), append(to.Examples, ex)
			to.MixLabels, to.MixLambdas = append(to.MixLabels, 1-y), append(to.MixLambdas, 0.7)
		}
	}
	b.Features = append(b.Features, later.Features...)
	b.Labels, b.Examples = append(b.Labels, later.Labels...), append(b.Examples, later.Examples...)
	b.MixLabels, b.MixLambdas = append(b.MixLabels, later.MixLabels...), append(b.MixLambdas, later.MixLambdas...)
	meta := features.Metadata{Classes: []string{"a", "b"}, Views: &features.Views{Views: 2, Augment: "flip", MixDiff: 1, MixWith: "public", MixAlpha: 1}}
	var parts []features.Batch
	for lo := 0; lo < len(b.Labels); lo += 50 {
		hi := min(lo+50, len(b.Labels))
		parts = append(parts, features.Batch{Dim: 3, Features: b.Features[lo*3 : hi*3], Labels: b.Labels[lo:hi], Examples: b.Examples[lo:hi],
			MixLabels: b.MixLabels[lo:hi], MixLambdas: b.MixLambdas[lo:hi]})
	}
	if err := features.WriteFile(path, meta, features.WriterOptions{}, parts...); err != nil {
		t.Fatal(err)
	}
}

// TestSoftLabelledTrainingFiles (#22, DP-Mix_Diff): every method that can
// honour soft labels fits a file of mixups with public images, wherever an
// example's rows lie (the in-memory methods fit the same model from the
// scattered file, dpsgd within 1e-6); n and the class counts count examples, each in its own
// class; the exponential mechanisms refuse; split keeps the soft labels.
func TestSoftLabelledTrainingFiles(t *testing.T) {
	dir := t.TempDir()
	grouped, scattered := filepath.Join(dir, "soft.arrow"), filepath.Join(dir, "soft-s.arrow")
	softFile(t, grouped, false)
	softFile(t, scattered, true)
	fit := func(m, train, name string, extra ...string) (*models.Classifier, int, string) {
		t.Helper()
		clf, code, _, errs := fitOn(t, m, train, filepath.Join(dir, name+".safetensors"), []string{"--epsilon", "1", "--delta", "1e-5"},
			append([]string{"--seed", "3", "--public-counts"}, extra...)...)
		return clf, code, errs
	}
	for _, m := range []string{"dpls", "dpfc", "dpsgd", "dpplmean", "dplp", "dpnewton", "auto", "ls", "logreg"} {
		a, code, errs := fit(m, grouped, m)
		if code != 0 {
			t.Fatalf("%s: exit %d, %s", m, code, errs)
		}
		if a.TrainRows != 60 || !slices.Equal(a.TrainCounts, []int64{30, 30}) {
			t.Errorf("%s: train_rows %d, counts %v; want 60 examples, 30 + 30", m, a.TrainRows, a.TrainCounts)
		}
		if a.Guarantee.Accountant != "none" && !strings.Contains(a.Guarantee.Unit, "1 mixups with the public images public (soft labels") {
			t.Errorf("%s: guarantee unit %q", m, a.Guarantee.Unit)
		}
		b, code, errs := fit(m, scattered, m+"-s")
		if code != 0 {
			t.Fatalf("%s scattered: exit %d, %s", m, code, errs)
		}
		// dplp holds the prepared examples in memory, in the same order
		// whatever the file's: the same model bit for bit. dpsgd streams
		// them in blocks, which the scattered file cuts elsewhere.
		var worst float64
		for i := range a.Weight {
			worst = math.Max(worst, math.Abs(float64(a.Weight[i]-b.Weight[i])))
		}
		if (m == "dplp" && worst > 0) || (m == "dpsgd" && worst > 1e-6) {
			t.Errorf("%s: the scattered file fits another classifier (weights %g apart)", m, worst)
		}
	}
	// Streamed under a small --memory, and with a private transform.
	for _, c := range [][]string{{"dpfc", "--memory", "1MiB"}, {"dpnewton", "--memory", "1MiB"}, {"dpls", "--transform", "pca", "--transform-dims", "2"}, {"dpsgd", "--transform", "center"}} {
		if _, code, errs := fit(c[0], scattered, c[0]+"-x", c[1:]...); code != 0 {
			t.Errorf("%v: exit %d, %s", c, code, errs)
		}
	}
	pub := filepath.Join(dir, "public.arrow")
	blobFile(t, pub, 40, 3, []string{"a", "b", "c"}, "", 5)
	for _, m := range []string{"dpplpublic", "dpplpublick"} {
		if _, code, errs := fit(m, grouped, m, "--public", pub); code != 1 || !strings.Contains(errs, "cannot take soft labels") {
			t.Errorf("%s on soft labels: exit %d, %q", m, code, errs)
		}
	}
	tr, va := filepath.Join(dir, "tr.arrow"), filepath.Join(dir, "va.arrow")
	if code, _, errs := run(t, "split", "--in", scattered, "--train", tr, "--val", va, "--val-fraction", "0.3"); code != 0 {
		t.Fatal(errs)
	}
	if _, code, errs := fit("dpsgd", tr, "after-split"); code != 0 {
		t.Errorf("fit on a split soft-labelled file: exit %d, %s", code, errs)
	}
	if code, _, errs := run(t, "inspect", grouped); code != 0 || !strings.Contains(errs, "1 mixups with public images") {
		t.Errorf("inspect: exit %d, %q", code, errs)
	}
}
