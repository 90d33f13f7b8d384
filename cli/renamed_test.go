package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/internal/orttest"
)

// TestOneNameOneMeaning (#40 item 7): across every command, the encoder
// is --encoder, images are --data, a feature file --features (or
// --train/--test/--in), images per encoder call --encoder-batch, a
// training batch --batch, a hash key --key and a random seed --seed. The
// old spellings are hidden.
func TestOneNameOneMeaning(t *testing.T) {
	// What each name's usage text must say, whatever the command.
	means := map[string][]string{
		"encoder":       {"encoder"},
		"data":          {"image"},
		"features":      {"feature"},
		"batch":         {"batch", "step"},
		"encoder-batch": {"images per encoder call"},
		"key":           {"key"},
		"seed":          {"seed", "keys"},
	}
	var walk func(path string, cs []*ucli.Command)
	walk = func(path string, cs []*ucli.Command) {
		for _, c := range cs {
			p := strings.TrimSpace(path + " " + c.Name)
			for _, f := range c.Flags {
				name := f.Names()[0]
				doc, _ := f.(ucli.DocGenerationFlag)
				if vf, ok := f.(ucli.VisibleFlag); ok && !vf.IsVisible() {
					if !strings.HasPrefix(doc.GetUsage(), "old name of --") && name != "train-name" && name != "public-name" && name != "transform-basis-name" {
						t.Errorf("%s: hidden flag --%s is not an old name", p, name)
					}
					continue
				}
				if name == "model" {
					t.Errorf("%s: --model is visible; the encoder is --encoder", p)
				}
				want, ok := means[name]
				if !ok || doc == nil {
					continue
				}
				usage := strings.ToLower(doc.GetUsage())
				hit := false
				for _, w := range want {
					hit = hit || strings.Contains(usage, w)
				}
				if !hit {
					t.Errorf("%s --%s: %q says none of %q", p, name, usage, want)
				}
				if name == "seed" && strings.Contains(usage, "hash") {
					t.Errorf("%s --seed keys a hash: that is --key", p)
				}
			}
			walk(p, c.Subcommands)
		}
	}
	walk("", NewApp(io.Discard, io.Discard).Commands)
}

// TestOldFlagNamesStillWork: each old spelling gives what the new one
// gives, says so on stderr, and refuses to be given with the new one.
func TestOldFlagNamesStillWork(t *testing.T) {
	orttest.Need(t)
	// The files are compared byte for byte: their creation time (to the
	// second) is pinned, or two runs a second apart differ.
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	dir := t.TempDir()
	data := filepath.Join(dir, "images")
	imageFolder(t, data, []string{"cat", "dog"}, 3)
	model := "../testdata/encoders/tiny-cnn.onnx"
	p := func(n string) string { return filepath.Join(dir, n) }
	code, _, errs := run(t, "extract", "--model", model, "--data", data, "--out", p("old.arrow"), "--batch", "2", "--quiet")
	if code != 0 {
		t.Fatalf("old names: exit %d: %s", code, errs)
	}
	if strings.Contains(errs, "note:") {
		t.Errorf("--quiet printed %q", errs)
	}
	code, _, errs = run(t, "extract", "--model", model, "--data", data, "--out", p("old2.arrow"), "--batch", "2", "--quiet=false")
	if code != 0 || !strings.Contains(errs, "note: --model is now --encoder") || !strings.Contains(errs, "note: --batch is now --encoder-batch") {
		t.Errorf("exit %d, stderr %q: want the two notes", code, errs)
	}
	if code, _, errs := run(t, "extract", "--encoder", model, "--data", data, "--out", p("new.arrow"), "--encoder-batch", "2", "--quiet"); code != 0 {
		t.Fatalf("new names: exit %d: %s", code, errs)
	}
	same(t, p("old.arrow"), p("new.arrow"))
	code, _, errs = run(t, "extract", "--model", model, "--encoder", model, "--data", data, "--out", p("both.arrow"))
	if code != 1 || !strings.Contains(errs, "--model is the old name of --encoder: give one of them") {
		t.Errorf("both names: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(p("both.arrow")); err == nil {
		t.Error("both names wrote the output")
	}
	// split: --seed is now --key.
	for _, c := range [][]string{{"--seed", "3", "--train", p("a1.arrow"), "--val", p("a2.arrow")}, {"--key", "3", "--train", p("b1.arrow"), "--val", p("b2.arrow")}} {
		if code, _, errs := run(t, append([]string{"split", "--in", p("new.arrow"), "--val-fraction", "0.5"}, c...)...); code != 0 {
			t.Fatalf("split %v: exit %d: %s", c, code, errs)
		}
	}
	same(t, p("a1.arrow"), p("b1.arrow"))
	// budget: --data is now --features.
	ledgerDir := p("ledger")
	if code, _, errs := run(t, "budget", "init", "--data", p("new.arrow"), "--epsilon", "1", "--delta", "1e-5", "--ledger", ledgerDir); code != 0 {
		t.Fatalf("budget init --data: exit %d: %s", code, errs)
	}
	if code, out, errs := run(t, "budget", "show", "--features", p("new.arrow"), "--ledger", ledgerDir); code != 0 || !strings.Contains(out, "ε") {
		t.Fatalf("budget show --features: exit %d: %s%s", code, out, errs)
	}
	// The help shows the new names only.
	_, help, _ := run(t, "extract", "--help")
	if strings.Contains(help, "--model") || strings.Contains(help, "--batch ") || !strings.Contains(help, "--encoder-batch") {
		t.Errorf("extract --help shows an old name:\n%s", help)
	}
}

// same fails unless the two files hold the same bytes.
func same(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Errorf("%s and %s differ", filepath.Base(a), filepath.Base(b))
	}
}
