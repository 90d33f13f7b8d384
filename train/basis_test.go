package train_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/synth"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/train"
)

// TestAutoTakesTheEncoderBasis (#41): features whose metadata names their
// encoder's basis (extract records it from the manifest) give auto that
// basis without a flag: the same classifier as --transform-basis with the
// same noise, the guarantee naming it. NoEncoderBasis, --public, an
// explicit basis and other methods are unaffected; a basis that has gone or
// changed since extract is an error that says what to pass.
func TestAutoTakesTheEncoderBasis(t *testing.T) {
	dir := t.TempDir()
	classes := []string{"a", "b", "c"}
	basis := filepath.Join(dir, "basis.arrow")
	if err := synth.WriteClusters(basis, 400, 24, features.Metadata{Classes: classes, EncoderSHA256: "enc", EncoderName: "enc"}, 0.7, 2, nil); err != nil {
		t.Fatal(err)
	}
	abs, sum, err := features.EncoderBasis(basis, "", "enc")
	if err != nil {
		t.Fatal(err)
	}
	meta := features.Metadata{Classes: classes, EncoderSHA256: "enc", EncoderName: "enc", Basis: abs, BasisSHA256: sum}
	named, plain := filepath.Join(dir, "named.arrow"), filepath.Join(dir, "plain.arrow")
	for _, p := range []string{named, plain} {
		if err := synth.WriteClusters(p, 600, 24, meta, 0.7, 1, nil); err != nil {
			t.Fatal(err)
		}
		meta.Basis, meta.BasisSHA256 = "", ""
	}
	fit := func(req train.Request) (*train.Outcome, error) {
		req.Options = solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 0.3, Delta: 1e-5, Noise: accounting.SeededNoise(4)}} // n·μ ≈ 50
		if req.Method == "" {
			req.Method = solvers.Auto
		}
		return train.Fit(context.Background(), req)
	}
	implicit, err := fit(train.Request{Train: named})
	if err != nil {
		t.Fatal(err)
	}
	explicit, err := fit(train.Request{Train: plain, Basis: basis})
	if err != nil {
		t.Fatal(err)
	}
	h := implicit.Classifier.Hyperparameters
	if name, _ := h["transform_basis"].(string); !strings.Contains(name, "the encoder's basis features "+abs) {
		t.Errorf("the implicit basis is named %q", name)
	}
	if !slices.Equal(implicit.Classifier.Weight, explicit.Classifier.Weight) || implicit.Classifier.Method != explicit.Classifier.Method {
		t.Errorf("the encoder's basis fits %s, --transform-basis %s, weights equal: %v", implicit.Classifier.Method, explicit.Classifier.Method,
			slices.Equal(implicit.Classifier.Weight, explicit.Classifier.Weight))
	}
	without, err := fit(train.Request{Train: plain})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []train.Request{
		{Train: named, NoEncoderBasis: true},
		{Train: named, Method: "dpplmean"},
	} {
		got, err := fit(req)
		if err != nil {
			t.Fatal(err)
		}
		ref := without
		if req.Method != "" {
			if ref, err = fit(train.Request{Train: plain, Method: req.Method}); err != nil {
				t.Fatal(err)
			}
		}
		if got.Classifier.Hyperparameters["transform_basis"] != nil || !slices.Equal(got.Classifier.Weight, ref.Classifier.Weight) {
			t.Errorf("%+v took the encoder's basis: %v", req, got.Classifier.Hyperparameters)
		}
	}
	// The encoder's basis as the training data: refused, saying the way out.
	self := filepath.Join(dir, "self.arrow")
	if err := synth.WriteClusters(self, 400, 24, features.Metadata{Classes: classes, EncoderSHA256: "enc", Basis: abs, BasisSHA256: sum}, 0.7, 2, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := fit(train.Request{Train: self}); err == nil || !strings.Contains(err.Error(), "public data must not hold private examples") || !strings.Contains(err.Error(), "--encoder-basis=false") {
		t.Errorf("the basis's rows as the training data: %v", err)
	}
	// Gone or changed since extract: an error naming the file and the way out.
	if err := os.WriteFile(basis+".new", []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(basis, basis+".old"); err != nil {
		t.Fatal(err)
	}
	_, err = fit(train.Request{Train: named})
	if !errors.Is(err, features.ErrNoBasis) || !strings.Contains(err.Error(), "--encoder-basis=false") {
		t.Errorf("a basis gone: %v", err)
	}
	if err := os.Rename(basis+".new", basis); err != nil {
		t.Fatal(err)
	}
	if _, err = fit(train.Request{Train: named}); err == nil || !strings.Contains(err.Error(), "has changed since extract") {
		t.Errorf("a basis changed: %v", err)
	}
	if _, err = fit(train.Request{Train: named, NoEncoderBasis: true}); err != nil {
		t.Errorf("NoEncoderBasis with the basis gone: %v", err)
	}
}
