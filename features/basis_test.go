package features_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/filehash"
	"github.com/dpfeat/dpfeat/internal/synth"
)

// TestEncoderBasis: a manifest's basis is checked to be one feature file
// of the same encoder, with the hash the manifest gives; what extract
// records reads back, and a file gone or changed since is an error.
func TestEncoderBasis(t *testing.T) {
	dir := t.TempDir()
	basis := filepath.Join(dir, "basis.arrow")
	if err := synth.WriteClusters(basis, 50, 4, features.Metadata{Classes: []string{"a", "b"}, EncoderSHA256: "enc"}, 0.5, 1, nil); err != nil {
		t.Fatal(err)
	}
	sum, _ := filehash.SHA256(basis)
	abs, got, err := features.EncoderBasis(basis, sum, "enc")
	if err != nil || got != sum || !filepath.IsAbs(abs) {
		t.Fatalf("EncoderBasis: %q %q %v", abs, got, err)
	}
	for _, c := range []struct {
		path, want, enc, err string
	}{
		{filepath.Join(dir, "none.arrow"), "", "enc", "no such basis file"},
		{dir, "", "enc", "is a folder"},
		{basis, "", "other", "comes from encoder"},
		{basis, strings.Repeat("0", 64), "enc", "but the manifest says"},
	} {
		if _, _, err := features.EncoderBasis(c.path, c.want, c.enc); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s %s: %v, want %q", filepath.Base(c.path), c.enc, err, c.err)
		}
	}
	md := features.Metadata{Basis: abs, BasisSHA256: sum}
	if p, err := features.RecordedBasis(md); p != abs || err != nil {
		t.Errorf("RecordedBasis: %q %v", p, err)
	}
	if p, err := features.RecordedBasis(features.Metadata{}); p != "" || err != nil {
		t.Errorf("RecordedBasis without one: %q %v", p, err)
	}
	os.WriteFile(basis, []byte("changed"), 0o644)
	if _, err := features.RecordedBasis(md); err == nil || !strings.Contains(err.Error(), "has changed since extract") {
		t.Errorf("changed: %v", err)
	}
	os.Remove(basis)
	if _, err := features.RecordedBasis(md); !errors.Is(err, features.ErrNoBasis) {
		t.Errorf("gone: %v", err)
	}
}
