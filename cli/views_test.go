package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/features"
)

// Until the methods group an example's views, every fit path refuses a
// multi-view training file (it would count each view as an example), and
// split keeps an example's views together (#22).
func TestMultiViewTrainingFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mv.arrow")
	b := features.Batch{Dim: 2}
	for e := 0; e < 60; e++ {
		for v := 0; v < 4; v++ {
			b.Features = append(b.Features, float32(e%2)+0.1*float32(v), float32(v))
			b.Labels = append(b.Labels, int32(e%2))
			b.Examples = append(b.Examples, "ex"+strings.Repeat("i", e%7)+string(rune('A'+e)))
		}
	}
	meta := features.Metadata{Classes: []string{"a", "b"}, Views: &features.Views{Views: 4, Augment: "flip"}}
	if err := features.WriteFile(path, meta, features.WriterOptions{}, b); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"dpls", "dpfc", "dpsgd", "dpplmean", "dplp", "dpnewton", "auto", "ls"} {
		eps := []string{"--epsilon", "1", "--delta", "1e-5"}
		if m == "ls" {
			eps = []string{"--epsilon", "inf"}
		}
		code, _, errs := run(t, append([]string{"fit", "--method", m, "--train", path, "--out", filepath.Join(dir, m+".safetensors")}, eps...)...)
		if code != 1 || !strings.Contains(errs, "is multi-view (4 views per example") {
			t.Errorf("fit %s: exit %d, %q", m, code, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, m+".safetensors")); err == nil {
			t.Errorf("fit %s wrote a classifier", m)
		}
	}
	cfg := filepath.Join(dir, "s.yaml")
	os.WriteFile(cfg, []byte("datasets: [{train: mv.arrow, test: mv.arrow}]\nmethods: {dpls: {}}\nepsilons: [1]\ndelta: 1e-5\n"), 0o644)
	if code, _, errs := run(t, "sweep", "--config", cfg, "--out", filepath.Join(dir, "r.arrow")); code != 1 || !strings.Contains(errs, "multi-view") {
		t.Errorf("sweep: exit %d, %q", code, errs)
	}
	tr, va := filepath.Join(dir, "tr.arrow"), filepath.Join(dir, "va.arrow")
	if code, _, errs := run(t, "split", "--in", path, "--train", tr, "--val", va, "--val-fraction", "0.3"); code != 0 {
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
	if code, _, errs := run(t, "convert", "--in", path, "--out", filepath.Join(dir, "mv.csv")); code != 1 || !strings.Contains(errs, "multi-view") {
		t.Errorf("convert to CSV: exit %d, %q", code, errs)
	}
}
