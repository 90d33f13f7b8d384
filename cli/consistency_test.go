package cli

import (
	"fmt"
	"github.com/dpfeat/dpfeat/internal/orttest"
	ucli "github.com/urfave/cli/v2"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One behaviour per concern across commands (#21 item 4): each rule has
// its test here.

// Flags may follow positional arguments; a flag's value moves with it,
// and "--" ends the flags.
func TestFlagsAfterArguments(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f.arrow")
	blobFile(t, f, 40, 3, []string{"a", "b"}, "sha-1", 1)
	_, want, _ := run(t, "inspect", "--json", f)
	code, got, errs := run(t, "inspect", f, "--json")
	if code != 0 || got != want {
		t.Errorf("inspect FILE --json: exit %d, %q", code, errs)
	}
	app := NewApp(nil, nil)
	for _, tc := range []struct{ in, want string }{
		{"dpfeat inspect F --json", "dpfeat inspect --json F"},
		{"dpfeat budget show --features D --json", "dpfeat budget show --features D --json"},
		{"dpfeat inspect F --classes a,b --json", "dpfeat inspect --classes a,b --json F"},
		{"dpfeat inspect F -- --json", "dpfeat inspect F -- --json"},
		{"dpfeat predict --features - --out -", "dpfeat predict --features - --out -"},
		{"dpfeat nosuch a --b", "dpfeat nosuch a --b"},
	} {
		if got := strings.Join(interspersed(app, strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("%q → %q, want %q", tc.in, got, tc.want)
		}
	}
}

// An existing output is replaced only with --force, by every command that
// writes one; the refusal names the flag and writes nothing.
func TestOutputsNeedForce(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.arrow")
	blobFile(t, train, 200, 4, []string{"a", "b"}, "sha-1", 1)
	clf := filepath.Join(dir, "clf.safetensors")
	out := func(name string) string { return filepath.Join(dir, name) }
	for _, args := range [][]string{
		{"fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", clf},
		{"predict", "--classifier", clf, "--features", train, "--out", out("p.csv")},
		{"split", "--in", train, "--train", out("tr.arrow"), "--val", out("va.arrow")},
		{"imbalance", "--in", train, "--ratio", "2", "--out", out("lt.arrow")},
		{"convert", "--in", train, "--out", out("t.parquet")},
		{"export-onnx", "--classifier", clf, "--out", out("h.onnx")},
	} {
		if code, _, errs := run(t, args...); code != 0 {
			t.Fatalf("%s: %s", args[0], errs)
		}
		before := map[string]string{}
		for _, a := range args {
			if b, err := os.ReadFile(a); err == nil && strings.HasPrefix(a, dir) {
				before[a] = string(b)
			}
		}
		code, _, errs := run(t, args...)
		if code != 1 || !strings.Contains(errs, "exists: pass --force to replace it") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s again: exit %d, %q", args[0], code, errs)
		}
		for a, b := range before {
			if now, _ := os.ReadFile(a); string(now) != b {
				t.Errorf("%s: a refused run changed %s", args[0], a)
			}
		}
		if code, _, errs := run(t, append(args, "--force")...); code != 0 {
			t.Errorf("%s --force: %s", args[0], errs)
		}
	}
}

// A flag the method does not read is refused, naming those it does.
func TestUnusedFlagsAreRefused(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.arrow")
	blobFile(t, train, 200, 4, []string{"a", "b"}, "sha-1", 1)
	fit := func(extra ...string) []string {
		return append([]string{"fit", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, "c.safetensors")}, extra...)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{fit("--method", "dpls", "--optimizer", "sgd"), "--optimizer is not used by dpls (it reads --clip, --alpha, --lambda, --psd, --memory, --sigma, --runner, --n-public)"},
		{fit("--method", "dpfc", "--public", train), "--public is not used by dpfc"},
		// dpplmean does not use n: a private n released n̂ and stored 0 (#36).
		{fit("--method", "dpplmean", "--n-public=false"), "--n-public is not used by dpplmean"},
		{fit("--method", "dpls", "--distance", "euclidean"), "--distance is not used by dpls"},
		{fit("--method", "dpfc", "--budget-convention", "dppl"), "--budget-convention is not used by dpfc"},
		{fit("--method", "dplp", "--memory", "1GiB"), "--memory is not used by dplp"},
		{fit("--method", "dpplmean", "--k-pool", "2", "--optimizer", "adam"), "--optimizer is not used by dpplmean (it reads --k-pool, --clip, --count-noise, --refine, --distance, --sigma, --runner, --public)"},
	} {
		code, _, errs := run(t, tc.args...)
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %q; want %q", tc.args[8:], code, errs, tc.want)
		}
	}
	// A transform reads --public and --memory whatever the method.
	pub := filepath.Join(dir, "public.arrow")
	blobFile(t, pub, 60, 4, []string{"a", "b"}, "sha-1", 9)
	if code, _, errs := run(t, fit("--method", "dpfc", "--transform", "pca", "--public", pub, "--memory", "1GiB")...); code != 0 {
		t.Errorf("dpfc with a public transform: %s", errs)
	}
}

// Output names carry the format: an extension the command does not write
// is refused.
func TestOutputExtensionsChecked(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.arrow")
	blobFile(t, train, 200, 4, []string{"a", "b"}, "sha-1", 1)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, "x.pt")}, "has extension .pt; expected .safetensors"},
		{[]string{"predict", "--classifier", train, "--features", train, "--out", filepath.Join(dir, "p.txt")}, "has extension .txt; expected .arrow"},
		{[]string{"convert", "--in", train, "--out", filepath.Join(dir, "t")}, "has no extension"},
		{[]string{"split", "--in", train, "--train", filepath.Join(dir, "a.csv"), "--val", filepath.Join(dir, "b.arrow")}, "--train"},
		{[]string{"export-onnx", "--classifier", train, "--out", filepath.Join(dir, "m.pb")}, "expected .onnx"},
	} {
		code, _, errs := run(t, tc.args...)
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, %q; want %q", tc.args[0], code, errs, tc.want)
		}
	}
}

// Every command prints a privacy figure by one rule (accounting.FormatUp):
// fit and the calculator agree on the noise multiplier and μ of the same
// calibration.
func TestOnePrivacyRounding(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.arrow")
	blobFile(t, train, 200, 4, []string{"a", "b"}, "sha-1", 1)
	_, fitOut, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, "c.safetensors"))
	_, calc, _ := run(t, "privacy", "sigma", "--epsilon", "1", "--delta", "1e-5", "--releases", "3")
	for _, want := range []string{"6.46165", "μ = 0.268052"} {
		if !strings.Contains(fitOut, want) || !strings.Contains(calc, want) {
			t.Errorf("%q: fit says\n%s%s\nprivacy sigma says\n%s", want, fitOut, errs, calc)
		}
	}
}

// TestUnknownCommandSuggests (#40 item 8): a mistyped command is named,
// with the nearest command when it is a typo, in one line, exit 1.
func TestUnknownCommandSuggests(t *testing.T) {
	for _, c := range []struct{ arg, want string }{
		{"fti", `unknown command "fti"; did you mean fit?`},
		{"extrct", "did you mean extract?"},
		{"budgte", "did you mean budget?"},
		{"zzzzzz", `unknown command "zzzzzz" (dpfeat --help lists them)`},
		{"budget shw", `unknown command "budget shw"; did you mean show? (dpfeat budget --help lists them)`},
		{"privacy epsilno --sigma 1", "did you mean epsilon?"},
	} {
		code, _, errs := run(t, strings.Fields(c.arg)...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, %q", c.arg, code, errs)
		}
	}
	// A private method at ε = ∞ is told so before --delta is asked for.
	if code, _, errs := run(t, "fit", "--method", "dpfc", "--epsilon", "inf", "--train", "x.arrow", "--out", "y.safetensors"); code != 1 || !strings.Contains(errs, "dpfc is private") {
		t.Errorf("fit dpfc at ε = inf without δ: %d %s", code, errs)
	}
}

// TestQuietIsQuiet (#40 item 4): extract --quiet prints nothing on
// success, not even the line about hashing the source examples.
func TestQuietIsQuiet(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	for i := 0; i < 4; i++ {
		pngFile(t, filepath.Join(dir, "imgs", []string{"a", "b"}[i%2], fmt.Sprintf("%d.png", i)), make([]byte, 28*28))
	}
	code, _, errs := run(t, "extract", "--encoder", "../testdata/encoders/tiny-cnn.onnx", "--data", filepath.Join(dir, "imgs"), "--out", filepath.Join(dir, "f.arrow"), "--quiet")
	if code != 0 || errs != "" {
		t.Errorf("extract --quiet: exit %d, stderr %q", code, errs)
	}
}

// TestHelpTextsSayOneThing (#40 item 8): no flag shows two defaults, or a
// default on a flag its usage says is required, and no usage text turns
// into a flag's placeholder.
func TestHelpTextsSayOneThing(t *testing.T) {
	var walk func(path string, cmds []*ucli.Command)
	walk = func(path string, cmds []*ucli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				df, ok := f.(ucli.DocGenerationFlag)
				if !ok {
					continue
				}
				usage, shown := df.GetUsage(), ucli.FlagStringer(f)
				i := strings.Index(shown, usage)
				if i < 0 {
					t.Errorf("%s %s: the usage text is not shown as written (a backquoted word becomes the placeholder): %s", path, f.Names()[0], shown)
					continue
				}
				if extra := shown[i+len(usage):]; strings.Contains(extra, "(default: ") && (strings.Contains(usage, "default") || strings.Contains(usage, "required")) {
					t.Errorf("%s --%s: %s", path, f.Names()[0], shown)
				}
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("dpfeat", NewApp(io.Discard, io.Discard).Commands)
	for _, cmd := range []string{"sweep", "finetune"} {
		if _, stdout, _ := run(t, cmd, "--help"); strings.Contains(stdout, "see the README") || strings.Contains(stdout, "contract (README") {
			t.Errorf("%s --help points to the README for what docs hold", cmd)
		}
	}
}
