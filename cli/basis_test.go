package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/orttest"
	"github.com/dpfeat/dpfeat/synthbasis"
)

// TestFitWithATransformBasis (#41): --transform-basis gives auto, below
// n·μ = 100, DPPL-Mean on the basis's principal directions; the fit says so,
// records it, and the guarantee lists the basis as public. Bad uses are
// refused in one line with nothing written.
func TestFitWithATransformBasis(t *testing.T) {
	dir, train, basis := basisPair(t, 24)
	out := filepath.Join(dir, "clf.safetensors")
	code, stdout, errs := run(t, "fit", "--method", "auto", "--train", train, "--transform-basis", basis, "--epsilon", "0.3", "--delta", "1e-5", "--out", out, "--json") // n·μ ≈ 50
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep fitReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Method != "dpplmean" || rep.Hyperparameters["transform"] != "pca" || !strings.Contains(errs, "directions from the basis features") {
		t.Errorf("auto with a basis: method %s, hyperparameters %v\n%s", rep.Method, rep.Hyperparameters, errs)
	}
	g, _ := json.Marshal(rep.Guarantee)
	if !strings.Contains(string(g), "basis.arrow") {
		t.Errorf("the guarantee does not list the basis: %s", g)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--transform-basis", train}, "--transform-basis " + train + " is the training file"},
		{[]string{"--transform-basis", basis, "--public", basis}, "--transform-basis and --public"},
		{[]string{"--transform-basis", basis, "--method", "dpls", "--transform", "standardize"}, "goes with --transform pca or whiten"},
	} {
		bad := filepath.Join(dir, "bad.safetensors")
		args := append([]string{"fit", "--method", "auto", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", bad}, c.args...)
		code, _, errs := run(t, args...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want 1 and %q", c.args, code, errs, c.want)
		}
		if _, err := os.Stat(bad); err == nil {
			t.Errorf("%v wrote %s", c.args, bad)
		}
	}
}

// TestFitWithABasisSubspace (#41): --transform-basis-subspace whitens
// privately within the basis's top directions, and auto does so at
// n·μ 100–300 with at most 16·D rows (and D ≥ 128); both say so and list
// the basis.
func TestFitWithABasisSubspace(t *testing.T) {
	dir, train, basis := basisPair(t, 128) // D ≥ solvers.AutoSubspaceMinDim
	for _, c := range []struct {
		args   []string
		method string
		dims   float64
	}{
		{[]string{"--method", "dpplmean", "--transform", "whiten", "--transform-basis-subspace", "--transform-dims", "8"}, "dpplmean", 8},
		{[]string{"--method", "auto", "--epsilon", "1"}, "dpplmean", 32}, // n·μ ≈ 161, 600 ≤ 16·128 rows
	} {
		out := filepath.Join(dir, c.method+c.args[1]+".safetensors")
		args := append([]string{"fit", "--train", train, "--transform-basis", basis, "--epsilon", "1", "--delta", "1e-5", "--out", out, "--json"}, c.args...)
		code, stdout, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		var rep fitReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		h := rep.Hyperparameters
		if rep.Method != c.method || h["transform"] != "whiten" || h["transform_subspace"] != true || h["transform_dims"] != c.dims {
			t.Errorf("%v: method %s, hyperparameters %v\n%s", c.args, rep.Method, h, errs)
		}
		g, _ := json.Marshal(rep.Guarantee)
		if !strings.Contains(string(g), "basis.arrow") || !strings.Contains(string(g), "whiten subspace") {
			t.Errorf("%v: the guarantee does not list the basis's subspace: %s", c.args, g)
		}
	}
}

// TestExtractRecordsTheEncoderBasis (#41): a manifest's basis (the
// encoder's own public training data, extracted) is recorded by extract in
// the features it makes, and fit --method auto takes it without a flag,
// saying so and listing it; --encoder-basis=false fits without it. A basis
// not there yet (while it is being made) is a note; one of another encoder
// is refused in one line.
func TestExtractRecordsTheEncoderBasis(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "tiny-cnn.onnx")
	b, err := os.ReadFile("../testdata/encoders/tiny-cnn.onnx")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(model, b, 0o644)
	m, err := os.ReadFile("../testdata/encoders/tiny-cnn.json")
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(string(m), `"name": "tiny-cnn",`, `"name": "tiny-cnn", "basis": {"file": "basis/public.arrow"},`, 1)
	os.WriteFile(filepath.Join(dir, "tiny-cnn.json"), []byte(manifest), 0o644)
	public, private := filepath.Join(dir, "public-images"), filepath.Join(dir, "private-images")
	imageFolderVariant(t, public, []string{"cat", "dog"}, 6, 1)
	imageFolder(t, private, []string{"cat", "dog"}, 6)
	basis := filepath.Join(dir, "basis", "public.arrow")
	os.MkdirAll(filepath.Dir(basis), 0o755)
	extract := func(data, out string) (int, string) {
		code, _, errs := run(t, "extract", "--encoder", model, "--data", data, "--out", out, "--quiet")
		return code, errs
	}
	// Before the basis exists: a note, nothing recorded.
	early := filepath.Join(dir, "early.arrow")
	if code, errs := extract(private, early); code != 0 || !strings.Contains(errs, "which is not there") {
		t.Errorf("extract before the basis: exit %d %q", code, errs)
	}
	// The basis itself: no note about it.
	if code, errs := extract(public, basis); code != 0 || strings.Contains(errs, "basis") {
		t.Fatalf("extract of the basis: exit %d %q", code, errs)
	}
	train := filepath.Join(dir, "train.arrow")
	if code, errs := extract(private, train); code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	for p, want := range map[string]string{early: "", basis: "", train: basis} {
		f, err := features.Open(p, features.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if md := f.Metadata(); md.Basis != want || (want != "") != (len(md.BasisSHA256) == 64) {
			t.Errorf("%s records basis %q (sha256 %q), want %q", filepath.Base(p), md.Basis, md.BasisSHA256, want)
		}
		f.Close()
	}
	fit := func(args ...string) (fitReport, string) {
		out := filepath.Join(t.TempDir(), "clf.safetensors")
		args = append([]string{"fit", "--method", "auto", "--train", train, "--epsilon", "2", "--delta", "1e-5", "--out", out, "--json"}, args...) // n·μ ≈ 10
		code, stdout, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var rep fitReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		return rep, errs
	}
	rep, errs := fit()
	g, _ := json.Marshal(rep.Guarantee)
	if !strings.Contains(errs, "the transform's directions came from the encoder's basis features "+basis) || !strings.Contains(string(g), "the encoder's basis features "+basis) {
		t.Errorf("auto without a flag: %s\n%s", errs, g)
	}
	if rep, errs := fit("--encoder-basis=false"); rep.Hyperparameters["transform_basis"] != nil || strings.Contains(errs, "encoder's manifest") {
		t.Errorf("--encoder-basis=false: %v\n%s", rep.Hyperparameters, errs)
	}
	// A manifest naming another encoder's features.
	other := filepath.Join(dir, "other.arrow")
	blobFile(t, other, 20, 8, []string{"cat", "dog"}, "sha-1", 1)
	os.WriteFile(filepath.Join(dir, "tiny-cnn.json"), []byte(strings.Replace(manifest, "basis/public.arrow", "other.arrow", 1)), 0o644)
	code, _, errs := run(t, "extract", "--encoder", model, "--data", private, "--out", filepath.Join(dir, "bad.arrow"))
	if code != 1 || !strings.Contains(errs, "comes from encoder") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("a basis of another encoder: exit %d %q", code, errs)
	}
}

// TestFitWithABasisPrior (#41): --transform-basis-prior whitens privately
// in all D with the basis's second-moment matrix averaged in, says so and
// lists the basis; auto, given a basis, does not where it fits DP-LP, nor
// DP-SGD when an optimizer is named.
func TestFitWithABasisPrior(t *testing.T) {
	dir, train, basis := basisPair(t, 80)
	for i, args := range [][]string{
		{"--method", "dpsgd", "--transform", "whiten", "--transform-basis-prior"},
		{"--method", "auto"},                        // n·μ ≈ 1000, 600 ≤ 16·80 rows: DP-LP, the basis not used
		{"--method", "auto", "--optimizer", "adam"}, // an optimizer named: DP-SGD
	} {
		prior := args[1] != "auto"
		method := "dpsgd"
		if len(args) == 2 {
			method = "dplp"
		}
		out := filepath.Join(dir, fmt.Sprint(i)+".safetensors")
		code, stdout, errs := run(t, append([]string{"fit", "--train", train, "--transform-basis", basis, "--epsilon", "8", "--delta", "1e-5", "--out", out, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var rep fitReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		h := rep.Hyperparameters
		if rep.Method != method || h["transform"] != "whiten" || (h["transform_basis_prior"] == true) != prior || h["transform_dims"] != 80.0 {
			t.Errorf("%v: method %s, hyperparameters %v\n%s", args, rep.Method, h, errs)
		}
		g, _ := json.Marshal(rep.Guarantee)
		if strings.Contains(string(g), "basis.arrow") != prior || strings.Contains(string(g), "whiten prior") != prior {
			t.Errorf("%v: the guarantee should list the basis as the prior only when asked: %s", args, g)
		}
	}
}

// basisPair writes 600 training rows and 400 basis rows of d features
// (three classes, one encoder) to a new folder.
func basisPair(t *testing.T, d int) (dir, train, basis string) {
	dir = t.TempDir()
	train, basis = filepath.Join(dir, "train.arrow"), filepath.Join(dir, "basis.arrow")
	for i, p := range []string{train, basis} {
		blobFile(t, p, 600-200*i, d, tenClasses, "sha-1", uint64(i+1))
	}
	return dir, train, basis
}

// tenClasses are as many classes as auto's DPPL-Mean bands were measured
// at (solvers.AutoPrototypeClasses): with fewer they end sooner.
var tenClasses = []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}

// TestExtractMakesASyntheticBasis (#41): with a manifest that names no
// basis, extract runs the encoder over random-process images once (a
// cache) and records their features as the encoder's basis; neighbouring
// sources (one image less) record the same file and hash, as they must —
// it holds no data. fit --method auto takes it, says where it came from
// and lists it in the guarantee; --synthetic-basis 0 records none; a basis
// gone from the cache stops fit in one line that says how to remake it, one
// remade is taken, another file in its place is refused. A cache that
// cannot be written costs the basis, with a note, not the extraction.
func TestExtractMakesASyntheticBasis(t *testing.T) {
	orttest.Need(t)
	cache := t.TempDir()
	t.Setenv(synthbasis.CacheEnv, cache)
	dir := t.TempDir()
	model := "../testdata/encoders/tiny-cnn.onnx"
	images, fewer := filepath.Join(dir, "images"), filepath.Join(dir, "fewer")
	imageFolder(t, images, []string{"cat", "dog"}, 6)
	imageFolder(t, fewer, []string{"cat", "dog"}, 6)
	if err := os.Remove(filepath.Join(fewer, "dog", "c.png")); err != nil {
		t.Fatal(err)
	}
	extract := func(data, out string, args ...string) (features.Metadata, string) {
		t.Helper()
		code, _, errs := run(t, append([]string{"extract", "--encoder", model, "--data", data, "--out", out, "--quiet"}, args...)...)
		if code != 0 {
			t.Fatalf("extract %s: exit %d %s", data, code, errs)
		}
		f, err := features.Open(out, features.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return f.Metadata(), errs
	}
	train := filepath.Join(dir, "train.arrow")
	md, errs := extract(images, train)
	if !strings.Contains(errs, "the encoder's synthetic basis: 2000 random-process images (no data) → "+md.Basis) {
		t.Errorf("extract did not say it made the basis: %q", errs)
	}
	if filepath.Dir(md.Basis) != filepath.Join(cache, "basis") || len(md.BasisSHA256) != 64 || !md.SyntheticBasis() {
		t.Errorf("recorded basis %q (sha256 %q, source %q), want one in %s", md.Basis, md.BasisSHA256, md.BasisSource, cache)
	}
	md2, errs := extract(fewer, filepath.Join(dir, "fewer.arrow"))
	if md2.Basis != md.Basis || md2.BasisSHA256 != md.BasisSHA256 || md2.BasisSource != md.BasisSource || strings.Contains(errs, "synthetic basis") {
		t.Errorf("a neighbouring source records basis %q %q %q (made again: %v), want %q %q %q", md2.Basis, md2.BasisSHA256, md2.BasisSource, strings.Contains(errs, "synthetic basis"), md.Basis, md.BasisSHA256, md.BasisSource)
	}
	code, stdout, _ := run(t, "extract", "--encoder", model, "--data", images, "--out", filepath.Join(dir, "json.arrow"), "--json")
	var rep extractReport
	if err := json.Unmarshal([]byte(stdout), &rep); code != 0 || err != nil || rep.Basis != md.Basis {
		t.Errorf("extract --json: exit %d, %v, basis %q, want %q", code, err, rep.Basis, md.Basis)
	}
	if md0, _ := extract(images, filepath.Join(dir, "none.arrow"), "--synthetic-basis", "0"); md0.Basis != "" || md0.BasisSource != "" {
		t.Errorf("--synthetic-basis 0 records %q (%q)", md0.Basis, md0.BasisSource)
	}
	fit := func() (int, fitReport, string) {
		out := filepath.Join(t.TempDir(), "clf.safetensors")
		code, stdout, errs := run(t, "fit", "--method", "auto", "--train", train, "--epsilon", "2", "--delta", "1e-5", "--out", out, "--json") // n·μ ≈ 10
		var rep fitReport
		if code == 0 {
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
		}
		return code, rep, errs
	}
	code, fitted, errs := fit()
	g, _ := json.Marshal(fitted.Guarantee)
	origin := "random-process images through the encoder, made by extract: no data"
	if code != 0 || !strings.Contains(errs, "the transform's directions came from the encoder's basis features "+md.Basis+", "+origin) || !strings.Contains(string(g), md.Basis+" ("+origin+")") {
		t.Errorf("auto with the synthetic basis: exit %d\n%s\n%s", code, errs, g)
	}
	if err := os.Rename(md.Basis, md.Basis+".away"); err != nil {
		t.Fatal(err)
	}
	code, _, errs = fit()
	if code != 1 || !strings.Contains(errs, "synthetic basis "+md.Basis) || !strings.Contains(errs, "extract any images with this encoder") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("the basis gone: exit %d %q", code, errs)
	}
	// Remade with other bits (here: another synthetic basis of the
	// encoder), it is taken: it is checked by what it is, not by its hash.
	other, _ := extract(images, filepath.Join(dir, "other.arrow"), "--synthetic-basis", "100")
	if b, err := os.ReadFile(other.Basis); err != nil || os.WriteFile(md.Basis, b, 0o644) != nil {
		t.Fatal(err)
	}
	if code, _, errs := fit(); code != 0 {
		t.Errorf("a remade basis: exit %d %q", code, errs)
	}
	blobFile(t, md.Basis, 20, 8, []string{"cat", "dog"}, "sha-1", 1)
	if code, _, errs := fit(); code != 1 || !strings.Contains(errs, "is not a synthetic basis of this encoder") {
		t.Errorf("another file in its place: exit %d %q", code, errs)
	}
	// A cache that cannot be made: a note, and features without a basis.
	blocked := filepath.Join(dir, "a-file")
	os.WriteFile(blocked, nil, 0o644)
	t.Setenv(synthbasis.CacheEnv, filepath.Join(blocked, "cache"))
	if mdb, errs := extract(images, filepath.Join(dir, "blocked.arrow")); mdb.Basis != "" || !strings.Contains(errs, "note: no synthetic basis") {
		t.Errorf("an unwritable cache: basis %q, %q", mdb.Basis, errs)
	}
	if code, _, errs := run(t, "extract", "--encoder", model, "--data", images, "--out", filepath.Join(dir, "bad.arrow"), "--synthetic-basis", "-1"); code != 1 || !strings.Contains(errs, "--synthetic-basis must be ≥ 0") {
		t.Errorf("--synthetic-basis -1: exit %d %q", code, errs)
	}
}
