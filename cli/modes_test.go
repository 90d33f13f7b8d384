//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputModesFollowTheUmask (#35 item 13) runs every command that
// writes files (those that need ONNX Runtime check their outputs in their
// own tests) under a umask of 077, as a locked-down account on a shared
// machine has: what dpfeat writes is 0600 there (0666 less the umask, as a
// shell's redirection gives), never readable by the machine's other users,
// and a file replaced with --force keeps its mode.
func TestOutputModesFollowTheUmask(t *testing.T) {
	strictUmask(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	classes := []string{"a", "b", "c"}
	blobFile(t, p("train.arrow"), 240, 6, classes, "sha-1", 1)
	blobFile(t, p("test.arrow"), 90, 6, classes, "sha-1", 2)
	os.WriteFile(p("sweep.yaml"), []byte("datasets: [{train: train.arrow, test: test.arrow}]\nmethods: {dpls: {}}\nepsilons: [1]\ndelta: 1e-5\nseeds: 1\n"), 0o644)
	steps := []struct {
		args    []string
		outputs []string
	}{
		{[]string{"fit", "--method", "dpls", "--train", p("train.arrow"), "--epsilon", "1", "--delta", "1e-5", "--out", p("clf.safetensors")}, []string{"clf.safetensors"}},
		{[]string{"predict", "--classifier", p("clf.safetensors"), "--features", p("test.arrow"), "--out", p("pred.arrow")}, []string{"pred.arrow"}},
		{[]string{"split", "--in", p("train.arrow"), "--train", p("tr.arrow"), "--val", p("va.arrow")}, []string{"tr.arrow", "va.arrow"}},
		{[]string{"imbalance", "--in", p("train.arrow"), "--out", p("lt.arrow"), "--ratio", "10"}, []string{"lt.arrow"}},
		{[]string{"sweep", "--config", p("sweep.yaml"), "--out", p("results.arrow"), "--classifiers", p("clfs")}, []string{"results.arrow"}},
		{[]string{"export", "--results", p("results.arrow"), "--format", "csv", "--out", p("results.csv")}, []string{"results.csv"}},
		{[]string{"budget", "init", "--features", p("train.arrow"), "--ledger", p("ledger"), "--epsilon", "4", "--delta", "1e-5"}, nil},
	}
	for _, s := range steps {
		if code, _, errs := run(t, s.args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(s.args[:1], " "), code, errs)
		}
		for _, o := range s.outputs {
			checkMode(t, s.args[0], p(o), 0o600)
		}
	}
	// The sweep's classifiers and the ledger's files, wherever they are.
	for _, root := range []string{p("clfs"), p("ledger")} {
		n := 0
		filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(path, ".lock") {
				checkMode(t, root, path, 0o600)
				n++
			}
			return nil
		})
		if n == 0 {
			t.Errorf("%s holds no files", root)
		}
	}
	// Replaced with --force: the file keeps the mode its owner gave it.
	os.Chmod(p("results.csv"), 0o640)
	if code, _, errs := run(t, "export", "--results", p("results.arrow"), "--format", "csv", "--out", p("results.csv"), "--force"); code != 0 {
		t.Fatalf("export --force: exit %d: %s", code, errs)
	}
	checkMode(t, "export --force", p("results.csv"), 0o640)
}

// strictUmask sets the umask of a locked-down account (077) for the test.
func strictUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	t.Cleanup(func() { syscall.Umask(old) })
}

func checkMode(t *testing.T, step, path string, want os.FileMode) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Errorf("%s: %v", step, err)
		return
	}
	if got := st.Mode().Perm(); got != want {
		t.Errorf("%s wrote %s with mode %04o, want %04o", step, path, got, want)
	}
}
