package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/sweep"
)

func TestSweepAndExport(t *testing.T) {
	dir := t.TempDir()
	classes := []string{"a", "b", "c"}
	blobFile(t, filepath.Join(dir, "train.arrow"), 300, 6, classes, "sha-1", 1)
	blobFile(t, filepath.Join(dir, "test.arrow"), 150, 6, classes, "sha-1", 2)
	cfg := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(cfg, []byte("datasets: [{train: train.arrow, test: test.arrow}]\nmethods: {dpls: {}, dpfc: {steps: [2, 3]}, ls: {}}\nepsilons: [1, 4]\ndelta: 1e-5\nseeds: 2\n"), 0o644)
	out := filepath.Join(dir, "results.arrow")
	code, stdout, errs := run(t, "sweep", "--config", cfg, "--out", out, "--jobs", "2")
	if code != 0 || !strings.Contains(stdout, "14 jobs") || !strings.Contains(stdout, "| dpfc |") || !strings.Contains(errs, "[14/14]") {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, stdout, errs)
	}
	if code, _, errs := run(t, "sweep", "--config", cfg, "--out", out); code != 1 || !strings.Contains(errs, "--resume") {
		t.Errorf("sweep over existing results: exit %d, %q", code, errs)
	}
	if code, _, errs := run(t, "sweep", "--config", cfg, "--out", out, "--resume", "--json"); code != 0 || !strings.Contains(errs, "14 of 14 jobs already done") {
		t.Errorf("resume of a finished sweep: exit %d, %q", code, errs)
	}
	for _, f := range []string{"csv", "json", "parquet", "ipynb", "png", "svg"} {
		p := filepath.Join(dir, "out."+f)
		if code, _, errs := run(t, "export", "--results", out, "--format", f, "--out", p); code != 0 {
			t.Fatalf("export %s: exit %d: %s", f, code, errs)
		}
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("export %s: %v", f, err)
		}
	}
	for _, f := range []string{"csv", "json"} {
		p := filepath.Join(dir, "summary."+f)
		if code, _, errs := run(t, "export", "--results", out, "--format", f, "--summary", "--out", p); code != 0 {
			t.Fatalf("export --summary %s: exit %d: %s", f, code, errs)
		}
	}
	nb, _ := os.ReadFile(filepath.Join(dir, "out.ipynb"))
	if !strings.Contains(string(nb), `RESULTS = \"results.arrow\"`) {
		t.Errorf("the notebook does not load results.arrow relative to itself")
	}
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"export", "--results", out, "--format", "png", "--out", filepath.Join(dir, "out.png")}, "exists: pass --force"},
		{[]string{"export", "--results", out, "--format", "xlsx", "--out", filepath.Join(dir, "x")}, "--format must be one of"},
		{[]string{"export", "--results", out, "--format", "png", "--summary", "--out", filepath.Join(dir, "y")}, "--summary applies to csv and json"},
		{[]string{"export", "--results", filepath.Join(dir, "train.arrow"), "--format", "csv", "--out", filepath.Join(dir, "z")}, "not a dpfeat results file"},
		{[]string{"sweep", "--config", cfg, "--out", filepath.Join(dir, "r2.arrow"), "--jobs", "-1"}, "--jobs must be at least 1"},
	}
	for _, c := range bad {
		if code, _, errs := run(t, c.args...); code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errs, c.want)
		}
	}
	// A bad configuration is refused before any work: no output, no journal.
	os.WriteFile(cfg, []byte("datasets: [{train: train.arrow, test: test.arrow}]\nmethods: {dpls: {}}\nepsilons: [1]\ndelta: 1e-5\nsedes: 3\n"), 0o644)
	r3 := filepath.Join(dir, "r3.arrow")
	if code, _, errs := run(t, "sweep", "--config", cfg, "--out", r3); code != 1 || !strings.Contains(errs, "sedes") || !strings.Contains(errs, cfg) {
		t.Errorf("unknown key: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(r3 + ".journal"); !os.IsNotExist(err) {
		t.Errorf("a refused sweep left a journal")
	}
}

// everyMethodSweep writes, in dir, a seeded sweep of every registered
// method with its defaults at ε = 2 over small blob files (train, val,
// test, public) and returns the configuration and the number of methods.
func everyMethodSweep(t *testing.T, dir string) (cfg string, methods int) {
	t.Helper()
	classes := []string{"a", "b", "c"}
	blobFile(t, filepath.Join(dir, "train.arrow"), 240, 6, classes, "sha-1", 1)
	blobFile(t, filepath.Join(dir, "val.arrow"), 60, 6, classes, "sha-1", 2)
	blobFile(t, filepath.Join(dir, "test.arrow"), 60, 6, classes, "sha-1", 3)
	blobFile(t, filepath.Join(dir, "public.arrow"), 90, 6, classes, "sha-1", 4)
	var names []string
	for _, m := range solvers.Methods() {
		names = append(names, m.Name+": {}")
	}
	cfg = filepath.Join(dir, "sweep.yaml")
	os.WriteFile(cfg, []byte("datasets: [{train: train.arrow, validation: val.arrow, test: test.arrow, public: public.arrow}]\n"+
		"methods: {"+strings.Join(names, ", ")+"}\nepsilons: [2]\ndelta: 1e-5\nseeds: 1\nnoise: seeded\n"), 0o644)
	return cfg, len(names)
}

// TestSweepAndFitWriteIdenticalClassifiers fits every method through the
// sweep (noise: seeded, --classifiers) and through `dpfeat fit --seed`
// with the row's noise_seed: the two paths share train.Fit, so the
// classifiers are byte-identical.
func TestSweepAndFitWriteIdenticalClassifiers(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	dir := t.TempDir()
	cfg, methods := everyMethodSweep(t, dir)
	out, clfs := filepath.Join(dir, "results.arrow"), filepath.Join(dir, "classifiers")
	if code, _, errs := run(t, "sweep", "--config", cfg, "--out", out, "--classifiers", clfs); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	rows, err := sweep.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != methods {
		t.Fatalf("%d rows for %d methods", len(rows), methods)
	}
	for _, r := range rows {
		t.Run(r.Method, func(t *testing.T) {
			if r.Error != "" || r.Classifier == "" || r.NoiseSeed == "" {
				t.Fatalf("row: error %q, classifier %q, noise seed %q", r.Error, r.Classifier, r.NoiseSeed)
			}
			eps := "2"
			if !r.Private {
				eps = "inf"
			}
			mine := filepath.Join(dir, r.Method+".safetensors")
			args := []string{"fit", "--method", r.Method, "--train", filepath.Join(dir, "train.arrow"), "--epsilon", eps,
				"--seed", r.NoiseSeed, "--out", mine}
			if r.Private {
				args = append(args, "--delta", "1e-5")
			}
			if strings.HasPrefix(r.Method, "dpplpublic") || r.Method == "auto" {
				args = append(args, "--public", filepath.Join(dir, "public.arrow"))
			}
			if code, _, errs := run(t, args...); code != 0 {
				t.Fatalf("fit: exit %d: %s", code, errs)
			}
			a, _ := os.ReadFile(r.Classifier)
			b, _ := os.ReadFile(mine)
			if len(a) == 0 || !bytes.Equal(a, b) {
				ca, _ := models.LoadClassifier(r.Classifier)
				cb, _ := models.LoadClassifier(mine)
				t.Errorf("the sweep's classifier (%d bytes) differs from fit's (%d bytes):\nsweep %+v\nfit   %+v", len(a), len(b), ca, cb)
			}
		})
	}
}

// TestSweepOnARunner (#42 item 3): a sweep's jobs spread over a runner's
// workers (Prism in this process, two slots) — every method, each job run
// whole on a worker — give the rows and, with seeded noise, the byte-identical
// classifiers of the sweep on one machine; the journal keeps each row as
// it comes back, so the runner's sweep resumes like any other.
func TestSweepOnARunner(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	dir := t.TempDir()
	cfg, methods := everyMethodSweep(t, dir)
	sweepTo := func(name string, extra ...string) []sweep.Row {
		t.Helper()
		out := filepath.Join(dir, name+".arrow")
		args := append([]string{"sweep", "--config", cfg, "--out", out, "--classifiers", filepath.Join(dir, name)}, extra...)
		if code, _, errs := run(t, args...); code != 0 {
			t.Fatalf("sweep %v: exit %d: %s", extra, code, errs)
		}
		rows, err := sweep.ReadResults(out)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	one := sweepTo("one")
	beam := sweepTo("prism", "--runner", "prism", "--runner-workers", "2")
	if len(beam) != len(one) || len(one) != methods {
		t.Fatalf("%d rows on the runner, %d on one machine, %d methods", len(beam), len(one), methods)
	}
	for i, r := range one {
		b := beam[i]
		if r.Error != "" || b.Error != "" {
			t.Errorf("%s: errors %q (one machine), %q (runner)", r.Method, r.Error, b.Error)
			continue
		}
		if b.Job != r.Job || !sameValue(b.TestAccuracy, r.TestAccuracy) || !sameValue(b.ValAccuracy, r.ValAccuracy) || b.NoiseSeed != r.NoiseSeed {
			t.Errorf("%s: runner row %+v, one machine %+v", r.Method, b, r)
		}
		x, _ := os.ReadFile(r.Classifier)
		y, _ := os.ReadFile(b.Classifier)
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s: the runner's classifier (%d bytes) differs from one machine's (%d)", r.Method, len(y), len(x))
		}
	}
	if code, _, errs := run(t, "sweep", "--config", cfg, "--out", filepath.Join(dir, "j.arrow"), "--runner", "prism", "--jobs", "2"); code != 1 || !strings.Contains(errs, "--runner-workers") {
		t.Errorf("--jobs with --runner: exit %d, %q", code, errs)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".prism.arrow.runner-*")); len(leftovers) > 0 {
		t.Errorf("the runner's scratch folder was left: %v", leftovers)
	}
}

// sameValue: both missing, or both there and equal.
func sameValue(a, b *float64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
