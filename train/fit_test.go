package train_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/synth"
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
			o := solvers.Options{Epsilon: 2, Delta: 1e-5, Noise: accounting.SeededNoise(3)}
			if method == "ls" {
				o = solvers.Options{Epsilon: math.Inf(1)}
			}
			a, err := train.Fit(context.Background(), train.Request{Method: method, Train: full, Exclude: rule, Cache: c, Options: o})
			if err != nil {
				t.Fatal(err)
			}
			o.Noise = accounting.SeededNoise(3)
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
