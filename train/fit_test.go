package train_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/synth"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/train"
)

// TestExcludeIsTheFileWithoutThoseRows: a fit with Exclude equals the fit
// of a file written without the rule's rows, for a streamed and an
// in-memory method, with and without a shared Cache.
func TestExcludeIsTheFileWithoutThoseRows(t *testing.T) {
	dir := t.TempDir()
	full, kept := filepath.Join(dir, "full.arrow"), filepath.Join(dir, "kept.arrow")
	meta := features.Metadata{Classes: []string{"a", "b", "c"}, EncoderName: "demo"}
	if err := synth.WriteClusters(full, 400, 5, meta, 0.6, 1, nil); err != nil {
		t.Fatal(err)
	}
	rule, err := features.NewRowSplit(0.2, 9)
	if err != nil {
		t.Fatal(err)
	}
	m, err := features.ReadAll(full, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, others := rule.Select(m)
	f, err := features.Open(full, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := features.CopyRows(f, others, kept, f.Metadata()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cache := &train.Cache{}
	for _, method := range []string{"dpls", "dpsgd", "ls"} {
		for _, c := range []*train.Cache{nil, cache, cache} {
			o := solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 2, Delta: 1e-5, Noise: accounting.SeededNoise(3)}}
			if method == "ls" {
				o = solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: math.Inf(1)}}
			}
			a, err := train.Fit(context.Background(), train.Request{Method: method, Train: full, Exclude: rule, Cache: c, Options: o})
			if err != nil {
				t.Fatal(err)
			}
			o.Privacy.Noise = accounting.SeededNoise(3)
			b, err := train.Fit(context.Background(), train.Request{Method: method, Train: kept, Options: o})
			if err != nil {
				t.Fatal(err)
			}
			if a.Rows != len(others) || b.Rows != len(others) || !slices.Equal(a.Classifier.Weight, b.Classifier.Weight) {
				t.Errorf("%s: rows %d and %d (want %d); weights equal: %v", method, a.Rows, b.Rows, len(others),
					slices.Equal(a.Classifier.Weight, b.Classifier.Weight))
			}
		}
	}
}

// TestTransformRoundTrip: a classifier fitted with a feature transform
// stores it exactly and applies at prediction what the method trained
// with: the loaded file scores every row as the fitted classifier does,
// and its transform maps a row to the method's view of it.
func TestTransformRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "train.arrow")
	meta := features.Metadata{Classes: []string{"a", "b", "c"}, EncoderName: "demo"}
	if err := synth.WriteClusters(path, 600, 8, meta, 0.6, 2, nil); err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(dir, "public.arrow")
	if err := synth.WriteClusters(pub, 300, 8, meta, 0.6, 3, nil); err != nil {
		t.Fatal(err)
	}
	m, err := features.ReadAll(path, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, kind, public string
	}{{"dpfc", solvers.TransformWhiten, ""}, {"dpls", solvers.TransformStandardize, ""}, {"dpsgd", solvers.TransformCenter, ""},
		{"dpfc", solvers.TransformPCA, pub}, {"auto", "", ""}, {"dpplpublic", solvers.TransformWhiten, pub}} {
		o := solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 4, Delta: 1e-5, Noise: accounting.SeededNoise(1)}, Transform: solvers.TransformSpec{Kind: c.kind}}
		if c.method == "dpplpublic" {
			o.Privacy.Delta = 0 // pure ε-DP: a public transform must not need δ
		}
		out, err := train.Fit(context.Background(), train.Request{Method: c.method, Train: path, Public: c.public, Options: o})
		if err != nil {
			t.Fatalf("%s+%s: %v", c.method, c.kind, err)
		}
		clf := out.Classifier
		tf := clf.Prep.Transform
		if tf == nil || !slices.Equal(tf.Mean, out.Result.Prep.Transform.Mean) {
			t.Fatalf("%s+%s: classifier transform %+v", c.method, c.kind, tf)
		}
		file := filepath.Join(dir, c.method+c.kind+".safetensors")
		if err := clf.Save(file); err != nil {
			t.Fatal(err)
		}
		back, err := models.LoadClassifier(file)
		if err != nil {
			t.Fatal(err)
		}
		bt := back.Prep.Transform
		if bt == nil || bt.Kind != tf.Kind || bt.Dims != tf.Dims || !slices.Equal(bt.Mean, tf.Mean) || !slices.Equal(bt.Scale, tf.Scale) || !slices.Equal(bt.Projection, tf.Projection) {
			t.Fatalf("%s+%s: transform after the round trip %+v, want %+v", c.method, c.kind, bt, tf)
		}
		a, b := make([]float64, 3), make([]float64, 3)
		for i := 0; i < m.Rows; i++ {
			x := make([]float64, m.Dim)
			for k, v := range m.Row(i) {
				x[k] = float64(v)
			}
			clf.Scores(slices.Clone(x), a)
			back.Scores(x, b)
			if !slices.Equal(a, b) {
				t.Fatalf("%s+%s: row %d scores %v after the round trip, %v before", c.method, c.kind, i, b, a)
			}
		}
		if c.method == "auto" && (clf.Method != "dpsgd" || clf.Hyperparameters["auto"] == nil) {
			t.Errorf("auto at n·μ ≈ 600/(z* ≈ 0.9): chose %s (%v), want dpsgd", clf.Method, clf.Hyperparameters["auto"])
		}
	}
}

// TestFewRowsNoteNamesARidge: the note that the dimension exceeds the
// training rows (the ridge keeps the system solvable) is for the methods
// that solve one, those with a ridge λ; DPPL-Mean, DP-SGD and auto fit
// such data without it.
func TestFewRowsNoteNamesARidge(t *testing.T) {
	train_ := filepath.Join(t.TempDir(), "few.arrow")
	if err := synth.WriteClusters(train_, 12, 20, features.Metadata{Classes: []string{"a", "b", "c"}}, 0.6, 1, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method string
		note   bool
	}{{"dpls", true}, {"dpfc", true}, {"dpnewton", true}, {"dpplmean", false}, {"dpsgd", false}, {"auto", false}} {
		var notes []string
		o := solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 2, Delta: 1e-5, Noise: accounting.SeededNoise(3)}}
		_, err := train.Fit(context.Background(), train.Request{Method: c.method, Train: train_, Options: o,
			Note: func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }})
		if err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
		got := slices.ContainsFunc(notes, func(s string) bool { return strings.Contains(s, "exceeds the 12 training rows") })
		if got != c.note {
			t.Errorf("%s: the few-rows note given %v, want %v (%q)", c.method, got, c.note, notes)
		}
	}
}
