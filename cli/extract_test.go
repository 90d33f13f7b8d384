//go:build cgo

package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/orttest"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/solvers"
)

func TestExtractCommand(t *testing.T) {
	orttest.Need(t)
	strictUmask(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "images")
	imageFolder(t, data, []string{"cat", "dog"}, 5)
	model := "../testdata/encoders/tiny-cnn.onnx"
	out := filepath.Join(dir, "f.arrow")
	code, stdout, errs := run(t, "extract", "--encoder", model, "--data", data, "--out", out, "--encoder-batch", "3", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Rows          int64  `json:"rows"`
		Dim           int    `json:"dim"`
		EncoderSHA256 string `json:"encoder_sha256"`
		Device        string `json:"device"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if rep.Rows != 10 || rep.Dim != 8 || rep.Device != "cpu" || len(rep.EncoderSHA256) != 64 {
		t.Errorf("report %+v", rep)
	}
	checkMode(t, "extract", out, 0o600)
	m, err := features.ReadAll(out, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta.EncoderName != "tiny-cnn" || m.Meta.EncoderSHA256 != rep.EncoderSHA256 || len(m.Meta.Classes) != 2 || m.IDs[9] != "dog/e.png" || m.Labels[9] != 1 {
		t.Errorf("file: %+v ids %v", m.Meta, m.IDs)
	}

	// Bad input: each a one-line error naming the culprit, exit 1.
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"name": "x", "input": {"layout": "NCHW", "channels": 3, "height": 16, "width": 16, "sclae": 1}, "output": {}}`), 0o644)
	wrong := filepath.Join(dir, "wrong.json")
	os.WriteFile(wrong, []byte(`{"name": "x", "input": {"name": "pixel_values", "layout": "NCHW", "channels": 3, "height": 24, "width": 24}, "output": {"name": "features"}}`), 0o644)
	notOnnx := filepath.Join(dir, "junk.onnx")
	os.WriteFile(notOnnx, []byte("junk"), 0o644)
	os.WriteFile(filepath.Join(dir, "junk.json"), []byte(`{"name": "junk", "input": {"layout": "NCHW", "channels": 3, "height": 16, "width": 16}, "output": {}}`), 0o644)
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o755)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"extract", "--encoder", filepath.Join(dir, "none.onnx"), "--data", data, "--out", strings.TrimSuffix(out, ".arrow") + "2.arrow"}, "none.json"},
		{[]string{"extract", "--encoder", model, "--manifest", bad, "--data", data, "--out", strings.TrimSuffix(out, ".arrow") + "2.arrow"}, `unknown key "sclae"`},
		{[]string{"extract", "--encoder", model, "--manifest", wrong, "--data", data, "--out", strings.TrimSuffix(out, ".arrow") + "2.arrow"}, "height 16, but the manifest says input.height 24"},
		{[]string{"extract", "--encoder", notOnnx, "--data", data, "--out", strings.TrimSuffix(out, ".arrow") + "2.arrow"}, "not a readable ONNX model"},
		{[]string{"extract", "--encoder", model, "--data", empty, "--out", strings.TrimSuffix(out, ".arrow") + "2.arrow"}, "no class folders"},
		{[]string{"extract", "--encoder", model, "--data", data, "--out", strings.TrimSuffix(out, ".arrow") + "2.arrow", "--device", "gpu"}, `--device "gpu"`},
		{[]string{"extract", "--encoder", model, "--data", data}, "--out is required"},
		{[]string{"extract", "--encoder", model, "--data", data, "--out", strings.TrimSuffix(out, ".arrow") + "2.arrow", "--encoder-batch", "0"}, "--encoder-batch must be at least 1"},
	}
	for _, c := range cases {
		code, _, errs := run(t, c.args...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want 1 and one line with %q", c.args[len(c.args)-2:], code, errs, c.want)
		}
		if _, err := os.Stat(out + "2"); !os.IsNotExist(err) {
			t.Errorf("%v: wrote an output", c.args)
		}
	}
}

// TestBudgetFollowsTheData (#15 item 10): a budget is keyed by the source
// data's identity, not a file's bytes. Extracting the same images with
// another encoder gives the same identity; split and imbalance keep it; a fit on a derived file is
// recorded in the parent data's ledger and refused past it; a derived file
// that carries no identity is refused when ledgers exist, saying why.
func TestBudgetFollowsTheData(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "images")
	imageFolder(t, data, []string{"cat", "dog"}, 12)
	model := "../testdata/encoders/tiny-cnn.onnx"
	a, b := filepath.Join(dir, "a.arrow"), filepath.Join(dir, "b.arrow")
	for _, c := range []struct{ out, model string }{{a, model}, {b, "../testdata/encoders/tiny-vit.onnx"}} {
		if code, _, errs := run(t, "extract", "--encoder", c.model, "--data", data, "--out", c.out, "--encoder-batch", "5"); code != 0 {
			t.Fatalf("extract: %s", errs)
		}
	}
	ma, _ := features.ReadMetadata(a)
	mb, _ := features.ReadMetadata(b)
	if !strings.HasPrefix(ma.DataID, "data:sha256:") || ma.DataID != mb.DataID {
		t.Fatalf("identities %q and %q", ma.DataID, mb.DataID)
	}
	tr, va, lt := filepath.Join(dir, "tr.arrow"), filepath.Join(dir, "va.arrow"), filepath.Join(dir, "lt.arrow")
	if code, _, errs := run(t, "split", "--in", a, "--val-fraction", "0.3", "--train", tr, "--val", va); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := run(t, "imbalance", "--in", a, "--ratio", "2", "--out", lt); code != 0 {
		t.Fatal(errs)
	}
	for _, f := range []string{tr, va, lt} {
		if m, _ := features.ReadMetadata(f); m.DataID != ma.DataID {
			t.Errorf("%s: identity %q, want the parent's", f, m.DataID)
		}
	}
	ledgerDir := filepath.Join(dir, "ledger")
	if code, _, errs := run(t, "budget", "init", "--features", b, "--epsilon", "1.2", "--delta", "1e-5", "--ledger", ledgerDir); code != 0 {
		t.Fatal(errs)
	}
	fit := func(train string) (int, string) {
		code, _, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--ledger", ledgerDir,
			"--out", filepath.Join(dir, filepath.Base(train)+".safetensors"))
		return code, errs
	}
	if code, errs := fit(tr); code != 0 {
		t.Fatalf("fit on the split: %s", errs)
	}
	// The parent's ledger (keyed by the data) recorded it: a second fit of
	// ε = 1 composes past 1.2 and is refused, on any file of the data.
	if code, errs := fit(lt); code != 1 || !strings.Contains(errs, "exceed the privacy budget") {
		t.Errorf("second fit on the same data: %d %s", code, errs)
	}
	// Its shard manifest is the same data (#36 item 5): keyed by its
	// shards' identity, it finds the ledger too (it was fitted unrecorded).
	manifest := filepath.Join(dir, "m.json")
	if code, _, errs := run(t, "extract", "--encoder", model, "--data", data, "--out", manifest, "--encoder-batch", "5", "--runner", "prism", "--quiet"); code != 0 {
		t.Fatalf("extract --runner: %s", errs)
	}
	if code, errs := fit(manifest); code != 1 || !strings.Contains(errs, "exceed the privacy budget") {
		t.Errorf("a fit on the data's shard manifest: %d %s", code, errs)
	}
	// A derived file without an identity (an older dpfeat's) is refused.
	f, err := features.Open(tr, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	meta := f.Metadata()
	meta.DataID = ""
	old := filepath.Join(dir, "old-split.arrow")
	rows := make([]int, f.Rows())
	for i := range rows {
		rows[i] = i
	}
	if err := features.CopyRows(f, rows, old, meta); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if code, errs := fit(old); code != 1 || !strings.Contains(errs, "carries no data identity") {
		t.Errorf("a derived file without identity: %d %s", code, errs)
	}
}

// TestExtractNeverReplacesInputs (#16 item 1): --out equal to the model or
// inside the image folder is refused before any work.
func TestExtractNeverReplacesInputs(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "images")
	imageFolder(t, data, []string{"cat", "dog"}, 2)
	model := filepath.Join(dir, "m.onnx")
	raw, _ := os.ReadFile("../testdata/encoders/tiny-cnn.onnx")
	os.WriteFile(model, raw, 0o644)
	man, _ := os.ReadFile("../testdata/encoders/tiny-cnn.json")
	os.WriteFile(filepath.Join(dir, "m.json"), man, 0o644)
	for _, out := range []string{model, filepath.Join(data, "cat", "f.arrow")} {
		code, _, errs := run(t, "extract", "--encoder", model, "--manifest", filepath.Join(dir, "m.json"), "--data", data, "--out", out)
		if code != 1 || !(strings.Contains(errs, "same file") || strings.Contains(errs, "lies inside")) {
			t.Errorf("--out %s: exit %d, %q", out, code, errs)
		}
	}
	if after, _ := os.ReadFile(model); string(after) != string(raw) {
		t.Fatal("the model was changed")
	}
}

// TestExtractMixDiff (#22, DP-Mix_Diff): extract --views K --mix-with
// PUBLIC --mix-diff M writes K + M rows per image, the mixups carrying the
// public image's class (mapped by name) and λ; a DP method fits the file;
// a public class that is not a training class is refused.
func TestExtractMixDiff(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	data, public, other := filepath.Join(dir, "images"), filepath.Join(dir, "public"), filepath.Join(dir, "other")
	imageFolder(t, data, []string{"cat", "dog"}, 4)
	imageFolder(t, public, []string{"dog"}, 3) // one class: its label must be mapped to dog's, 1
	imageFolder(t, other, []string{"cat", "zebra"}, 2)
	model := "../testdata/encoders/tiny-cnn.onnx"
	out := filepath.Join(dir, "mix.arrow")
	args := []string{"extract", "--encoder", model, "--data", data, "--views", "2", "--mix-with", public, "--mix-diff", "3", "--augment-seed", "5"}
	if code, _, errs := run(t, append(args, "--out", out)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	f, err := features.Open(out, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if v := f.Views(); v == nil || v.MixDiff != 3 || !strings.Contains(v.MixWith, public) || f.Rows() != 8*5 {
		t.Fatalf("views %+v, %d rows; want 3 mixups with %s, 40 rows", v, f.Rows(), public)
	}
	mixes := 0
	f.Each(func(b features.Batch) error {
		for i, l := range b.MixLabels {
			switch {
			case strings.Contains(b.IDs[i], "#d"):
				mixes++
				if l != 1 || !(b.MixLambdas[i] >= 0 && b.MixLambdas[i] <= 1) {
					t.Errorf("row %s: mix label %d λ %v; want 1 (dog) and λ in [0, 1]", b.IDs[i], l, b.MixLambdas[i])
				}
			case l != features.Unlabeled:
				t.Errorf("row %s is not a mixup but has mix label %d", b.IDs[i], l)
			}
		}
		return nil
	})
	if mixes != 8*3 {
		t.Errorf("%d mixup rows, want 24", mixes)
	}
	if code, _, errs := run(t, "fit", "--method", "dpsgd", "--train", out, "--out", filepath.Join(dir, "c.safetensors"), "--epsilon", "2", "--delta", "1e-3"); code != 0 {
		t.Errorf("fit: exit %d, %s", code, errs)
	}
	if code, _, errs := run(t, append(args[:5:5], "--views", "2", "--mix-with", other, "--mix-diff", "1", "--out", filepath.Join(dir, "bad.arrow"))...); code != 1 || !strings.Contains(errs, `class "zebra" is not a training class`) {
		t.Errorf("a public class outside the training classes: exit %d, %q", code, errs)
	}
}

// TestRunnerPrism (#24 acceptance, through the command line): extract
// --runner prism writes a shard manifest whose rows equal the
// single-machine file's; fit --runner prism of every method that takes
// the flag — one pass, or a pass per step (dpfc, dpsgd full-batch and
// Poisson-sampled, dpnewton, newton), with and without a transform —
// gives, with --seed, the single-machine classifier (weights within 1e-6)
// and says which
// runner ran, on a multi-view manifest too; another method is refused,
// and a missing shard is named.
func TestRunnerPrism(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	data, model, single := runnerFixture(t, dir)
	sharded := filepath.Join(dir, "sharded.json")
	code, stdout, errs := run(t, "extract", "--encoder", model, "--data", data, "--out", sharded, "--encoder-batch", "2", "--runner", "prism",
		"--runner-workers", "2", "--shard-rows", "5", "--json")
	if code != 0 {
		t.Fatalf("extract --runner: exit %d: %s", code, errs)
	}
	var rep extractReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep.Runner != "prism" || rep.Shards != 4 || rep.Rows != 21 {
		t.Fatalf("report %+v, %v", rep, err)
	}
	a, _ := features.ReadAll(single, features.ReadOptions{})
	b, err := features.ReadAll(sharded, features.ReadOptions{})
	if err != nil || !slices.Equal(a.Data, b.Data) || !slices.Equal(a.IDs, b.IDs) || !slices.Equal(a.Labels, b.Labels) {
		t.Fatalf("the sharded features differ from the single-machine file (%v)", err)
	}
	fit := func(m, train, name string, extra ...string) (*models.Classifier, string) {
		t.Helper()
		clf, code, stdout, errs := fitOn(t, m, train, filepath.Join(dir, name+".safetensors"), []string{"--epsilon", "2", "--delta", "1e-3"},
			append([]string{"--seed", "4", "--json"}, extra...)...)
		if code != 0 {
			t.Fatalf("fit %s %v: exit %d: %s", m, extra, code, errs)
		}
		return clf, stdout
	}
	// Public features for the methods that choose prototypes from them:
	// other images through the same encoder.
	pubImages, public := filepath.Join(dir, "public-images"), filepath.Join(dir, "public.arrow")
	imageFolderVariant(t, pubImages, []string{"cat", "dog", "eel"}, 4, 1)
	if code, _, errs := run(t, "extract", "--encoder", model, "--data", pubImages, "--out", public, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	cases := [][]string{{"dpls"}, {"ls"}, {"dpplmean"}, {"protomean"}, {"dpfc"}, {"dpsgd"}, {"dpsgd", "--batch", "5"},
		{"dpnewton", "--steps", "2"}, {"newton"}, {"dpls", "--transform", "pca", "--transform-dims", "4"}, {"dpfc", "--transform", "standardize"}, {"auto"}, {"dplp", "--steps", "5"}, {"logreg", "--steps", "5"},
		{"dpplpublic", "--public", public}, {"dpplpublick", "--public", public, "--k", "2"},
		{"dpplpublic", "--public", public, "--d-min", "0.5"}, {"dpplpublick", "--public", public, "--k", "2", "--d-max", "1.5"}}
	for _, m := range solvers.Methods() {
		if slices.Contains(m.Reads, solvers.OptRunner) && !slices.ContainsFunc(cases, func(c []string) bool { return c[0] == m.Name }) {
			t.Errorf("%s takes --runner and is not tested with it here", m.Name)
		}
	}
	for k, c := range cases {
		m, extra := c[0], c[1:]
		tol := 1e-6
		want, _ := fit(m, single, fmt.Sprintf("%d-single", k), extra...)
		got, stdout := fit(m, sharded, fmt.Sprintf("%d-prism", k), append([]string{"--runner", "prism", "--runner-workers", "2"}, extra...)...)
		if !strings.Contains(stdout, `"runner": "prism"`) {
			t.Errorf("%v: the report does not name the runner", c)
		}
		if len(got.Weight) != len(want.Weight) {
			t.Fatalf("%v: %d weights, single machine %d", c, len(got.Weight), len(want.Weight))
		}
		for i := range want.Weight {
			if math.Abs(float64(got.Weight[i]-want.Weight[i])) > tol*math.Max(1, math.Abs(float64(want.Weight[i]))) {
				t.Fatalf("%v: weight %d = %v on prism, %v on one machine", c, i, got.Weight[i], want.Weight[i])
			}
		}
		if got.Guarantee.String() != want.Guarantee.String() {
			t.Errorf("%v: guarantee %q on prism, %q on one machine", c, got.Guarantee, want.Guarantee)
		}
	}
	// A multi-view extraction through the runner keeps each example's
	// views in one shard: fit --runner groups them there and gives the
	// single-machine fit of the same manifest.
	views := filepath.Join(dir, "views.json")
	if code, _, errs := run(t, "extract", "--encoder", model, "--data", data, "--out", views, "--encoder-batch", "2", "--views", "2", "--augment", "flip",
		"--runner", "prism", "--shard-rows", "4", "--quiet"); code != 0 {
		t.Fatalf("extract --views --runner: exit %d: %s", code, errs)
	}
	for k, c := range [][]string{{"dpsgd", "--batch", "5"}, {"dpls"}, {"dplp", "--steps", "3"}, {"dpplpublic", "--public", public, "--d-min", "0.5"}} {
		want, _ := fit(c[0], views, fmt.Sprintf("views-%d-single", k), c[1:]...)
		got, _ := fit(c[0], views, fmt.Sprintf("views-%d-prism", k), append([]string{"--runner", "prism"}, c[1:]...)...)
		for i := range want.Weight {
			if math.Abs(float64(got.Weight[i]-want.Weight[i])) > 1e-6*math.Max(1, math.Abs(float64(want.Weight[i]))) {
				t.Fatalf("views %v: weight %d = %v on prism, %v on one machine", c, i, got.Weight[i], want.Weight[i])
			}
		}
		if got.Guarantee.String() != want.Guarantee.String() || !strings.Contains(got.Guarantee.Unit, "2 augmented views") {
			t.Errorf("views %v: guarantee %q on prism, %q on one machine", c, got.Guarantee, want.Guarantee)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--method", "dpls", "--runner-option", "bogus=1"}, `"bogus" is not a Beam pipeline option`},
	} {
		args := append([]string{"fit", "--train", sharded, "--out", filepath.Join(dir, "x.safetensors"), "--epsilon", "1", "--delta", "1e-3", "--runner", "prism"}, c.args...)
		if code, _, errs := run(t, args...); code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, code, errs)
		}
	}
	// A worker's error (an image that does not decode) fails the run,
	// naming the image; the manifest is not written.
	os.WriteFile(filepath.Join(data, "dog", "zz-broken.png"), []byte("not a png"), 0o644)
	broken := filepath.Join(dir, "broken.json")
	if code, _, errs := run(t, "extract", "--encoder", model, "--data", data, "--out", broken, "--encoder-batch", "2", "--runner", "prism", "--quiet"); code != 1 || !strings.Contains(errs, "zz-broken.png") {
		t.Errorf("a worker's error: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(broken); err == nil {
		t.Error("a failed distributed extraction wrote its manifest")
	}
	os.Remove(filepath.Join(dir, "sharded.shards", "00002.arrow"))
	if code, _, errs := run(t, "fit", "--method", "dpls", "--train", sharded, "--out", filepath.Join(dir, "y.safetensors"), "--epsilon", "1", "--delta", "1e-3"); code != 1 || !strings.Contains(errs, "shard 3 of 4 (sharded.shards/00002.arrow) is missing") {
		t.Errorf("a missing shard: exit %d, %q", code, errs)
	}
}
