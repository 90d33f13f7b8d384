package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/synth"
	"github.com/dpfeat/dpfeat/models"
)

// blobFile writes a labelled feature file of Gaussian clusters.
func blobFile(t *testing.T, path string, n, d int, classes []string, sha string, seed uint64) {
	t.Helper()
	meta := features.Metadata{Classes: classes, EncoderSHA256: sha, EncoderName: "enc"}
	if err := synth.WriteClusters(path, n, d, meta, 0.7, seed, nil); err != nil {
		t.Fatal(err)
	}
}

func TestFitEvalPredict(t *testing.T) {
	dir := t.TempDir()
	classes := []string{"a", "b", "c", "d"}
	train, test := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow")
	blobFile(t, train, 800, 10, classes, "sha-1", 1)
	blobFile(t, test, 400, 10, classes, "sha-1", 2)
	for _, m := range []struct {
		method, eps string
	}{{"dpfc", "1"}, {"dpls", "0.5"}, {"dpnewton", "2"}, {"dpsgd", "4"}, {"dplp", "1"}, {"ls", "inf"}, {"newton", "inf"}} {
		clf := filepath.Join(dir, m.method+".safetensors")
		code, out, errs := run(t, "fit", "--method", m.method, "--train", train, "--epsilon", m.eps, "--delta", "1e-5", "--out", clf, "--json", "--seed", "3")
		if code != 0 {
			t.Fatalf("fit %s: exit %d: %s", m.method, code, errs)
		}
		var rep fitReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("fit %s --json: %v\n%s", m.method, err, out)
		}
		if rep.Method != m.method || rep.TrainRows != 800 || rep.Classes != 4 || rep.Dim != 10 || len(rep.Defaulted) == 0 {
			t.Errorf("fit %s: %+v", m.method, rep)
		}
		code, out, errs = run(t, "eval", "--classifier", clf, "--test", test, "--json")
		if code != 0 {
			t.Fatalf("eval %s: exit %d: %s", m.method, code, errs)
		}
		var ev evalReport
		json.Unmarshal([]byte(out), &ev)
		if ev.Rows != 400 || ev.Accuracy < 0.8 || len(ev.PerClass) != 4 || ev.BalancedAccuracy <= 0 {
			t.Errorf("eval %s: %+v", m.method, ev)
		}
	}
	pred := filepath.Join(dir, "pred.arrow")
	code, _, errs := run(t, "predict", "--classifier", filepath.Join(dir, "dpfc.safetensors"), "--features", test, "--out", pred)
	if code != 0 {
		t.Fatalf("predict: exit %d: %s", code, errs)
	}
	// A seeded fit says it is for reproduction only.
	code, out, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, "s.safetensors"), "--seed", "7")
	if code != 0 || !strings.Contains(errs, "reproduction only") || !strings.Contains(out, "reproduction only") {
		t.Errorf("seeded fit: exit %d, %q / %q", code, out, errs)
	}

	other := filepath.Join(dir, "other.arrow")
	blobFile(t, other, 50, 10, classes, "sha-2", 3)
	wide := filepath.Join(dir, "wide.arrow")
	blobFile(t, wide, 50, 12, classes, "sha-1", 3)
	clf := filepath.Join(dir, "dpfc.safetensors")
	bad := filepath.Join(dir, "bad.safetensors") // refused fits write nothing
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", "--method", "dpfc", "--train", train, "--epsilon", "0", "--delta", "1e-5", "--out", bad}, "--epsilon must be a positive"},
		{[]string{"fit", "--method", "dpfc", "--train", train, "--epsilon", "1", "--out", bad}, "--delta is required"},
		{[]string{"fit", "--method", "dpfc", "--train", train, "--epsilon", "1", "--delta", "1", "--out", bad}, "--delta: invalid privacy parameter: δ must be in (0, 1)"},
		{[]string{"fit", "--method", "dpfc", "--train", train, "--epsilon", "inf", "--delta", "1e-5", "--out", bad}, "dpfc is private"},
		{[]string{"fit", "--method", "ls", "--train", train, "--epsilon", "1", "--out", bad}, "run it with --epsilon inf"},
		{[]string{"fit", "--method", "svm", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", bad}, "unknown method"},
		{[]string{"fit", "--method", "dpfc", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", bad, "--lr", "-2"}, "lr must be a positive"},
		{[]string{"fit", "--method", "dpfc", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", bad, "--param", "lr"}, `--param "lr"`},
		{[]string{"eval", "--classifier", clf, "--test", other}, "pass --force"},
		{[]string{"eval", "--classifier", clf, "--test", wide}, "has 12 features per row"},
		{[]string{"eval", "--classifier", train, "--test", test}, "not a safetensors file"},
	} {
		code, _, errs := run(t, c.args...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want 1 and %q", c.args[:2], code, errs, c.want)
		}
	}
	if code, _, errs := run(t, "eval", "--classifier", clf, "--test", other, "--force"); code != 0 {
		t.Errorf("eval --force: exit %d: %s", code, errs)
	}
	// δ ≥ 1/n warns loudly but fits.
	code, _, errs = run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "0.01", "--out", filepath.Join(dir, "w.safetensors"))
	if code != 0 || !strings.Contains(errs, "WARNING") {
		t.Errorf("δ ≥ 1/n: exit %d, %q", code, errs)
	}
}

func TestPrototypeMethods(t *testing.T) {
	dir := t.TempDir()
	classes := []string{"a", "b", "c"}
	train, test, pub := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow"), filepath.Join(dir, "pub.arrow")
	blobFile(t, train, 2000, 8, classes, "sha-1", 1)
	blobFile(t, test, 300, 8, classes, "sha-1", 2)
	blobFile(t, pub, 200, 8, classes, "sha-1", 4)
	for i, args := range [][]string{
		{"--method", "dpplmean", "--epsilon", "1", "--delta", "1e-5"},
		{"--method", "dpplmean", "--epsilon", "1", "--delta", "1e-5", "--distance", "euclidean", "--k-pool", "2"},
		{"--method", "dpplmean", "--epsilon", "1", "--delta", "1e-5", "--distance", "euclidean", "--public-counts"},
		{"--method", "protomean", "--epsilon", "inf"},
		{"--method", "dpplpublic", "--epsilon", "1", "--public", pub},
		{"--method", "dpplpublick", "--epsilon", "1", "--public", pub, "--k", "3", "--d-min", "0.5"},
	} {
		clf := filepath.Join(dir, fmt.Sprintf("p%d.safetensors", i))
		// Seeded noise: the accuracy threshold must not be a coin toss.
		code, out, errs := run(t, append(append([]string{"fit", "--train", train, "--out", clf, "--seed", "5"}, args...), "--json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var rep fitReport
		json.Unmarshal([]byte(out), &rep)
		code, out, errs = run(t, "eval", "--classifier", clf, "--test", test, "--json")
		if code != 0 {
			t.Fatalf("eval %v: exit %d: %s", args, code, errs)
		}
		var ev evalReport
		json.Unmarshal([]byte(out), &ev)
		if ev.Accuracy < 0.8 {
			t.Errorf("%v: accuracy %.3f (%s)", args, ev.Accuracy, rep.Guarantee)
		}
		if args[1] == "dpplpublic" && (rep.Guarantee.Delta != 0 || rep.Accountant != "pure") {
			t.Errorf("dpplpublic: %+v", rep.Guarantee)
		}
	}
	code, _, errs := run(t, "fit", "--train", train, "--out", filepath.Join(dir, "x.safetensors"), "--method", "dpplpublic", "--epsilon", "1")
	if code != 1 || !strings.Contains(errs, "pass --public") {
		t.Errorf("dpplpublic without --public: exit %d, %q", code, errs)
	}
}

func TestParseBytes(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4GiB", 4 << 30, true},
		{"512MiB", 512 << 20, true},
		{"8e9", 8e9, true},
		{"1.5 GiB", 3 << 29, true},
		{"2GB", 2e9, true},
		{"1048576", 1 << 20, true},
		{"100", 0, false}, // below 1 MiB
		{"-1GiB", 0, false},
		{"lots", 0, false},
		{"NaN", 0, false},
	}
	for _, c := range cases {
		got, err := parseBytes(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}

// TestFitMemoryPasses checks that dpls under a small --memory says it makes
// several passes and gives the same classifier as one pass (same seed, up
// to float32 rounding: one pass sums G from the class Grams), and that a
// bad size is refused naming the flag.
func TestFitMemoryPasses(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.arrow")
	blobFile(t, train, 600, 200, []string{"a", "b", "c", "d"}, "sha-1", 1)
	var weights [][]float32
	for _, mem := range []string{"4GiB", "1MiB"} {
		clf := filepath.Join(dir, mem+".safetensors")
		code, _, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", clf, "--seed", "5", "--memory", mem)
		if code != 0 {
			t.Fatalf("fit --memory %s: exit %d: %s", mem, code, errs)
		}
		if multi := strings.Contains(errs, "passes over the data"); multi != (mem == "1MiB") {
			t.Errorf("--memory %s: note of several passes %v; stderr:\n%s", mem, multi, errs)
		}
		c, err := models.LoadClassifier(clf)
		if err != nil {
			t.Fatal(err)
		}
		weights = append(weights, c.Weight)
	}
	// Up to rounding relative to the largest weight: the PSD projection of
	// the noisy G runs in float32 below D = 1024.
	var top float64
	for _, v := range weights[0] {
		top = math.Max(top, math.Abs(float64(v)))
	}
	for i := range weights[0] {
		if a, b := float64(weights[0][i]), float64(weights[1][i]); math.Abs(a-b) > 1e-5*top {
			t.Fatalf("weight %d: %v in one pass, %v in several", i, weights[0][i], weights[1][i])
		}
	}
	code, _, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, "x"), "--memory", "lots")
	if code != 1 || !strings.Contains(errs, "--memory") {
		t.Errorf("--memory lots: exit %d, stderr %q; want 1 naming --memory", code, errs)
	}
}

// TestClassCountsStayPrivate: a private fit does not store the training
// file's class counts in the classifier unless --public-counts says they
// are public (and the guarantee then lists them); eval then names the
// minority classes from --train, or leaves minority accuracy out.
func TestClassCountsStayPrivate(t *testing.T) {
	dir := t.TempDir()
	classes := []string{"a", "b", "c", "d"}
	train, test := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow")
	blobFile(t, train, 800, 10, classes, "sha-1", 1)
	blobFile(t, test, 400, 10, classes, "sha-1", 2)
	for _, c := range []struct {
		method, eps string
		public      bool
		stored      bool
	}{{"dpls", "1", false, false}, {"dpfc", "1", false, false}, {"dpsgd", "1", false, false},
		{"dpls", "1", true, true}, {"dpsgd", "1", true, true}, {"ls", "inf", false, true}} {
		name := fmt.Sprintf("%s-%v", c.method, c.public)
		clf := filepath.Join(dir, name+".safetensors")
		args := []string{"fit", "--method", c.method, "--train", train, "--epsilon", c.eps, "--delta", "1e-5", "--out", clf}
		if c.public {
			args = append(args, "--public-counts")
		}
		if code, _, errs := run(t, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		got, err := models.LoadClassifier(clf)
		if err != nil {
			t.Fatal(err)
		}
		listed := slices.ContainsFunc(got.Guarantee.Public, func(p string) bool { return strings.Contains(p, "class counts (--public-counts)") })
		if (len(got.TrainCounts) > 0) != c.stored || (c.public && !listed) || (!c.public && listed) {
			t.Errorf("%s: counts %v, listed public %v", name, got.TrainCounts, listed)
		}
		for _, withTrain := range []bool{false, true} {
			args := []string{"eval", "--classifier", clf, "--test", test, "--json"}
			if withTrain {
				args = append(args, "--train", train)
			}
			code, out, errs := run(t, args...)
			if code != 0 {
				t.Fatalf("%s eval: exit %d: %s", name, code, errs)
			}
			var ev evalReport
			if err := json.Unmarshal([]byte(out), &ev); err != nil {
				t.Fatal(err)
			}
			if known := c.stored || withTrain; (ev.MinorityAccuracy != nil) != known || (known && ev.MinorityFrom == "") {
				t.Errorf("%s eval (--train %v): minority %v from %q", name, withTrain, ev.MinorityAccuracy, ev.MinorityFrom)
			}
		}
	}
}

// TestFitRefusesUnlabeledRows: streaming and in-memory methods name the
// first unlabeled row of the training file.
func TestFitRefusesUnlabeledRows(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.arrow")
	b := features.Batch{Dim: 3, Features: make([]float32, 30), Labels: make([]int32, 10)}
	for i := range b.Features {
		b.Features[i] = float32(i%7) + 1
	}
	for i := range b.Labels {
		b.Labels[i] = int32(i % 2)
	}
	b.Labels[6] = features.Unlabeled
	if err := features.WriteFile(train, features.Metadata{Classes: []string{"a", "b"}}, features.WriterOptions{}, b); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"dpls", "dpfc", "dpnewton", "dpsgd", "dpplmean"} {
		code, _, errs := run(t, "fit", "--method", m, "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, m+".safetensors"))
		if code != 1 || !strings.Contains(errs, "row 6 is unlabeled") || !strings.Contains(errs, train) {
			t.Errorf("%s: exit %d, stderr %q; want 1 naming row 6 and the file", m, code, errs)
		}
	}
}

// TestFitWithAnEmptyClass: a training file whose class list names a class
// without rows fits with every private method through the command line
// (#15 item 4): the neighbour that empties a class must not turn a model
// into an error.
func TestFitWithAnEmptyClass(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.arrow")
	meta := features.Metadata{Classes: []string{"a", "b", "c", "d"}, EncoderSHA256: "sha-1", EncoderName: "enc"}
	if err := synth.WriteClusters(train, 300, 6, meta, 0.7, 1, func(i int) int { return i % 3 }); err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(dir, "pub.arrow")
	blobFile(t, pub, 50, 6, []string{"a", "b", "c", "d"}, "sha-1", 2)
	for _, m := range []string{"dpls", "dpfc", "dpnewton", "dpsgd", "dplp", "dpplmean", "dpplpublic", "dpplpublick"} {
		args := []string{"fit", "--method", m, "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, m+".safetensors")}
		if strings.HasPrefix(m, "dpplpublic") {
			args = append(args, "--public", pub)
		}
		if code, _, errs := run(t, args...); code != 0 {
			t.Errorf("fit %s with an empty class: exit %d: %s", m, code, errs)
		}
	}
}

// TestEveryPrivateFitListsN (#15 item 6): a private classifier stores
// train_rows, and several methods divide by n or scale defaults with it;
// under add/remove adjacency n is private, so every private fit's
// guarantee lists it as assumed public — the prototype methods included,
// which once stored it without saying so.
func TestEveryPrivateFitListsN(t *testing.T) {
	dir := t.TempDir()
	train, pub := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "pub.arrow")
	blobFile(t, train, 120, 5, []string{"a", "b", "c"}, "sha-1", 1)
	blobFile(t, pub, 30, 5, []string{"a", "b", "c"}, "sha-1", 2)
	for _, m := range []string{"dpls", "dpfc", "dpnewton", "dpsgd", "dplp", "dpplmean", "dpplpublic", "dpplpublick"} {
		args := []string{"fit", "--method", m, "--train", train, "--epsilon", "1", "--delta", "1e-5", "--json", "--out", filepath.Join(dir, m+".safetensors")}
		if strings.HasPrefix(m, "dpplpublic") {
			args = append(args, "--public", pub)
		}
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("fit %s: %s", m, errs)
		}
		var rep fitReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		listed := 0
		for _, p := range rep.Guarantee.Public {
			if strings.HasPrefix(p, "the number of training examples (n = 120)") && strings.Contains(p, "train_rows") {
				listed++
			}
		}
		if listed != 1 {
			t.Errorf("%s: n listed %d times as public: %q", m, listed, rep.Guarantee.Public)
		}
	}
}

// TestFitWithPrivateN: --n-public=false releases n̂ from --n-share of the
// budget; the guarantee then lists no n as public and meets the target,
// the report and the classifier carry n̂, and bad shares are refused.
func TestFitWithPrivateN(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.arrow")
	blobFile(t, train, 120, 5, []string{"a", "b", "c"}, "sha-1", 1)
	out := filepath.Join(dir, "c.safetensors")
	code, stdout, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--n-public=false", "--json", "--out", out)
	if code != 0 {
		t.Fatal(errs)
	}
	var rep fitReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Guarantee.Public {
		if strings.HasPrefix(p, "the number of training examples") {
			t.Errorf("n listed as public: %q", p)
		}
	}
	found := false
	for _, m := range rep.Guarantee.Mechanisms {
		found = found || strings.Contains(m.Name, "n̂")
	}
	if !found || float64(rep.Guarantee.Epsilon) > 1 {
		t.Errorf("guarantee %+v", rep.Guarantee)
	}
	clf, err := models.LoadClassifier(out)
	if err != nil {
		t.Fatal(err)
	}
	if clf.TrainRows != int64(rep.TrainRows) {
		t.Errorf("classifier train_rows %d, report %d", clf.TrainRows, rep.TrainRows)
	}
	for _, bad := range [][]string{{"--n-share", "1"}, {"--public-counts"}} {
		args := append([]string{"fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--n-public=false", "--out", filepath.Join(dir, "x.safetensors")}, bad...)
		if code, _, _ := run(t, args...); code != 1 {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestPrivateNIsNeverPrinted (#36 item 2): under --n-public=false nothing
// prints, stores or reports the true number of training examples: dpsgd
// with a batch no run can take said "below n = 2000" after n̂ was
// charged; a batch above n̂ is full-batch.
func TestPrivateNIsNeverPrinted(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.arrow")
	const n = 1987
	blobFile(t, train, n, 5, []string{"a", "b", "c"}, "sha-1", 1)
	for _, batch := range []string{"-1", "0.5", "5000", "300"} {
		code, stdout, errs := run(t, "fit", "--method", "dpsgd", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--n-public=false",
			"--batch", batch, "--steps", "3", "--seed", "1", "--json", "--out", filepath.Join(dir, "c"+batch+".safetensors"))
		// n as a number of its own: "seconds": 0.3443198765 holds the
		// digits 1987 and once failed this test.
		if regexp.MustCompile(`\b` + strconv.Itoa(n) + `\b`).MatchString(stdout + errs) {
			t.Errorf("--batch %s: exit %d, the true n printed: %s%s", batch, code, stdout, errs)
		}
		if ok := batch == "5000" || batch == "300"; ok != (code == 0) {
			t.Errorf("--batch %s: exit %d, %q", batch, code, errs)
		}
	}
}

// TestOutputsNeverReplaceInputs (#16 item 1): an output that names an
// input — the same path, a relative or ".." spelling, a symlink, a hard
// link — or lies inside an input folder is refused with exit 1 and the
// input is left as it was.
func TestOutputsNeverReplaceInputs(t *testing.T) {
	dir := t.TempDir()
	train, pub := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "pub.arrow")
	blobFile(t, train, 90, 4, []string{"a", "b", "c"}, "sha-1", 1)
	blobFile(t, pub, 30, 4, []string{"a", "b", "c"}, "sha-1", 2)
	clf := filepath.Join(dir, "c.safetensors")
	if code, _, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", clf); code != 0 {
		t.Fatal(errs)
	}
	os.Symlink(train, filepath.Join(dir, "link.arrow"))
	os.Link(train, filepath.Join(dir, "hard.arrow"))
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	results := filepath.Join(dir, "r.arrow")
	before, _ := os.ReadFile(train)
	fit := func(out string, extra ...string) []string {
		return append([]string{"fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", out}, extra...)
	}
	for _, args := range [][]string{
		fit(train),
		fit(filepath.Join(dir, "sub", "..", "train.arrow")),
		fit(filepath.Join(dir, "link.arrow")),
		fit(filepath.Join(dir, "hard.arrow")),
		fit(pub, "--public", pub, "--method", "dpplpublic"),
		{"predict", "--classifier", clf, "--features", train, "--out", clf},
		{"split", "--in", train, "--val-fraction", "0.2", "--train", filepath.Join(dir, "hard.arrow"), "--val", filepath.Join(dir, "v.arrow")},
		{"export", "--results", results, "--format", "csv", "--out", results, "--force"},
	} {
		code, _, errs := run(t, args...)
		if code != 1 || !(strings.Contains(errs, "same file") || strings.Contains(errs, "lies inside")) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
	if after, _ := os.ReadFile(train); string(after) != string(before) {
		t.Fatal("an input was changed")
	}
}

// TestEvalRefusesForeignLabels (#16 item 5): a test file without class
// names whose labels exceed the classifier's classes is refused with the
// row named (eval panicked, predict wrote labels outside the class list).
func TestEvalRefusesForeignLabels(t *testing.T) {
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow")
	blobFile(t, train, 90, 4, []string{"a", "b", "c"}, "sha-1", 1)
	blobFile(t, test, 20, 4, []string{"a", "b", "c"}, "sha-1", 2)
	// labels 0..4 in a file without class names
	m, _ := features.ReadAll(test, features.ReadOptions{})
	for i := range m.Labels {
		m.Labels[i] = int32(i % 5)
	}
	b := features.Batch{Dim: m.Dim, Features: m.Data, Labels: m.Labels}
	if err := features.WriteFile(test, features.Metadata{EncoderSHA256: "sha-1"}, features.WriterOptions{}, b); err != nil {
		t.Fatal(err)
	}
	clf := filepath.Join(dir, "c.safetensors")
	if code, _, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", clf); code != 0 {
		t.Fatal(errs)
	}
	for _, args := range [][]string{
		{"eval", "--classifier", clf, "--test", test},
		{"predict", "--classifier", clf, "--features", test, "--out", filepath.Join(dir, "p.arrow")},
	} {
		code, _, errs := run(t, args...)
		if code != 1 || !strings.Contains(errs, `row 3: its label is not a class index 0..2`) {
			t.Errorf("%v: exit %d, %q", args[0], code, errs)
		}
	}
}

// TestDashIsStdinStdout (#16 item 14): "-" reads features or results from
// standard input and writes predictions or exports to standard output
// (it once created a file named "-").
func TestDashIsStdinStdout(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	train := filepath.Join(dir, "train.arrow")
	blobFile(t, train, 60, 4, []string{"a", "b", "c"}, "sha-1", 1)
	clf := filepath.Join(dir, "c.safetensors")
	if code, _, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", clf); code != 0 {
		t.Fatal(errs)
	}
	in, _ := os.ReadFile(train)
	var out, errb bytes.Buffer
	code := RunIO(context.Background(), []string{"dpfeat", "predict", "--classifier", clf, "--features", "-", "--out", "-"}, bytes.NewReader(in), &out, &errb)
	if code != 0 || !bytes.HasPrefix(out.Bytes(), []byte("ARROW1")) {
		t.Fatalf("predict - -: exit %d, %d bytes, %s", code, out.Len(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Error("a file named - was created")
	}
}

// TestNoNormalizeClassifierAppliesWhatWasTrained (#17 defect): under
// --no-normalize, with rows of norm 0.001–0.011, the written classifier
// must apply the preprocessing the method trained with — DP-LP rescales
// every row to norm C whatever the flags (it stored Normalize = false and
// scored 0.454 on its own training data); the others keep the scale.
func TestNoNormalizeClassifierAppliesWhatWasTrained(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "small.arrow")
	m := synth.Clusters(600, 6, 3, 0.3, 7, nil)
	for i := 0; i < m.Rows(); i++ {
		row := m.Row(i)
		var s float64
		for _, v := range row {
			s += float64(v) * float64(v)
		}
		f := float32((0.001 + 0.01*float64(i%11)/10) / math.Sqrt(s))
		for k := range row {
			row[k] *= f
		}
	}
	if err := features.WriteFile(train, features.Metadata{Classes: []string{"a", "b", "c"}, EncoderSHA256: "s"}, features.WriterOptions{}, m); err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"dplp", "dpsgd", "logreg"} {
		eps := "8"
		if method == "logreg" {
			eps = "inf"
		}
		clf := filepath.Join(dir, method+".safetensors")
		if code, _, errs := run(t, "fit", "--method", method, "--train", train, "--epsilon", eps, "--delta", "1e-5", "--no-normalize", "--out", clf, "--seed", "1"); code != 0 {
			t.Fatal(errs)
		}
		code, out, errs := run(t, "eval", "--classifier", clf, "--test", train, "--json")
		if code != 0 {
			t.Fatal(errs)
		}
		var rep struct {
			Accuracy float64 `json:"accuracy"`
		}
		json.Unmarshal([]byte(out), &rep)
		if method == "dplp" && rep.Accuracy < 0.9 {
			t.Errorf("%s --no-normalize: accuracy %.3f on its own training data", method, rep.Accuracy)
		}
		t.Logf("%s: %.3f", method, rep.Accuracy)
	}
}

// TestFitTransformFlags: --transform and --method auto from the command
// line — what they print and store, and the refusals, each one line
// naming the flag, before anything is written.
func TestFitTransformFlags(t *testing.T) {
	dir := t.TempDir()
	train, pub, test := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "pub.arrow"), filepath.Join(dir, "test.arrow")
	classes := tenClasses
	blobFile(t, train, 300, 6, classes, "sha-1", 1)
	blobFile(t, pub, 200, 6, classes, "sha-1", 2)
	blobFile(t, test, 100, 6, classes, "sha-1", 3)
	out := filepath.Join(dir, "clf.safetensors")
	code, stdout, errs := run(t, "fit", "--method", "auto", "--train", train, "--epsilon", "2", "--delta", "1e-5", "--out", out) // n·μ ≈ 150
	if code != 0 || !strings.Contains(stdout, "dpplmean on") || !strings.Contains(errs, "auto: n·μ") || !strings.Contains(stdout, "transform=whiten") || !strings.Contains(stdout, "transform_ridge=sample") {
		t.Fatalf("auto: exit %d\n%s\n%s", code, stdout, errs)
	}
	clf, err := models.LoadClassifier(out)
	if err != nil || clf.Method != "dpplmean" || clf.Prep.Transform == nil {
		t.Fatalf("auto's classifier: %v %+v", err, clf)
	}
	out2 := filepath.Join(dir, "pub.safetensors")
	code, stdout, errs = run(t, "fit", "--method", "dpls", "--transform", "pca", "--public", pub, "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", out2)
	if code != 0 || !strings.Contains(stdout, "learned from the public features") {
		t.Fatalf("public pca: exit %d\n%s\n%s", code, stdout, errs)
	}
	if code, _, errs := run(t, "eval", "--classifier", out2, "--test", test); code != 0 {
		t.Fatalf("eval: %s", errs)
	}
	// The public rows' cluster span: stored as the transform's projection
	// (4 of 6 dimensions), so eval scores through it.
	out3 := filepath.Join(dir, "span.safetensors")
	code, stdout, errs = run(t, "fit", "--method", "dpplmean", "--transform", "whiten", "--public", pub, "--transform-clusters", "4", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", out3)
	if code != 0 || !strings.Contains(stdout, "transform_clusters=4") || !strings.Contains(stdout, "transform_dims=4") {
		t.Fatalf("cluster span: exit %d\n%s\n%s", code, stdout, errs)
	}
	if clf, err := models.LoadClassifier(out3); err != nil || clf.Prep.Transform == nil || clf.Prep.Transform.Dims != 4 {
		t.Fatalf("cluster span's classifier: %v %+v", err, clf)
	}
	if code, _, errs := run(t, "eval", "--classifier", out3, "--test", test); code != 0 {
		t.Fatalf("eval: %s", errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--method", "dpls", "--transform", "rotate"}, "--transform: unknown transform"},
		{[]string{"--method", "dpls", "--transform-dims", "4"}, "--transform-dims and --transform-share need --transform"},
		{[]string{"--method", "dpls", "--transform", "center", "--transform-share", "1"}, "--transform-share"},
		{[]string{"--method", "dpls", "--transform", "pca", "--transform-ridge", "sample"}, "--transform: a ridge (--transform-ridge) applies to whiten only, not pca"},
		{[]string{"--method", "auto", "--transform-ridge", "sample"}, "--transform-ridge needs --transform whiten"},
		{[]string{"--method", "dpls", "--transform", "whiten", "--transform-ridge", "tiny"}, "unknown transform ridge"},
		{[]string{"--method", "dpls", "--transform", "whiten", "--transform-basis-subspace"}, "--transform-basis-subspace needs --transform whiten and --transform-basis"},
		{[]string{"--method", "auto", "--transform-basis-subspace"}, "--transform-basis-subspace needs --transform whiten and --transform-basis"},
		{[]string{"--method", "dpsgd", "--transform", "pca", "--transform-basis-prior"}, "--transform-basis-prior needs --transform whiten and --transform-basis"},
		{[]string{"--method", "dpplmean", "--transform", "whiten", "--transform-clusters", "8"}, "--transform-clusters needs --transform whiten and --public"},
		{[]string{"--method", "auto", "--transform-clusters", "8"}, "--transform-clusters needs --transform whiten and --public"},
		{[]string{"--method", "dpplmean", "--transform", "whiten", "--distill"}, "--distill needs --transform and --public"},
		{[]string{"--method", "auto", "--distill"}, "--distill needs --transform and --public"},
		{[]string{"--method", "dpsgd", "--transform", "whiten", "--transform-basis", "b.arrow", "--transform-basis-prior", "--transform-basis-subspace"}, "two uses of the basis: give one"},
		{[]string{"--method", "dpplpublic", "--transform", "center"}, "pure ε-DP"},
		{[]string{"--method", "dpls", "--transform", "center", "--no-normalize"}, "unit-normalised"},
		{[]string{"--method", "auto", "--lr", "1"}, "auto has no hyperparameter lr"},
	} {
		bad := filepath.Join(dir, "bad.safetensors")
		args := append([]string{"fit", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", bad}, c.args...)
		code, _, errs := run(t, args...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, %q (want one line with %q)", c.args, code, errs, c.want)
		}
		if _, err := os.Stat(bad); err == nil {
			t.Errorf("%v: wrote %s", c.args, bad)
		}
	}
}

// TestPublicDataIsNotThePrivateData (#36 item 3): --public naming the
// training file, a copy of it, a split of it, or another extraction of the
// same source is refused, naming both (dpplpublic published training rows
// verbatim as prototypes, and a transform learnt from them "at no privacy
// cost"); public data that is other data is taken, and the guarantee says
// how it was checked.
func TestPublicDataIsNotThePrivateData(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	classes := []string{"a", "b", "c"}
	blobFile(t, p("train.arrow"), 240, 6, classes, "sha-1", 1)
	blobFile(t, p("other.arrow"), 90, 6, classes, "sha-1", 2)
	b, _ := os.ReadFile(p("train.arrow"))
	os.WriteFile(p("copy.arrow"), b, 0o644)
	if code, _, errs := run(t, "split", "--in", p("train.arrow"), "--train", p("tr.arrow"), "--val", p("va.arrow")); code != 0 {
		t.Fatal(errs)
	}
	fit := func(method, public string, extra ...string) (int, string, string) {
		args := append([]string{"fit", "--method", method, "--train", p("train.arrow"), "--public", public, "--epsilon", "1", "--delta", "1e-5", "--json", "--force",
			"--out", p("c.safetensors")}, extra...)
		return run(t, args...)
	}
	for _, public := range []string{"train.arrow", "copy.arrow", "va.arrow"} {
		for _, c := range [][]string{{"dpplpublic"}, {"dpls", "--transform", "pca"}} {
			if code, _, errs := fit(c[0], p(public), c[1:]...); code != 1 || !strings.Contains(errs, "public data must not") || !strings.Contains(errs, public) {
				t.Errorf("%v with --public %s: exit %d, %q", c, public, code, errs)
			}
		}
	}
	code, stdout, errs := fit("dpplpublic", p("other.arrow"))
	if code != 0 || !strings.Contains(stdout, "checked not to be the training data") {
		t.Errorf("other public data: exit %d, %s %s", code, stdout, errs)
	}
	if encode.InitRuntime("") == nil {
		// Another extraction of the same source: the same data identity.
		data := p("images")
		imageFolder(t, data, []string{"cat", "dog"}, 4)
		for _, out := range []string{"x1.arrow", "x2.arrow"} {
			if code, _, errs := run(t, "extract", "--encoder", "../testdata/encoders/tiny-cnn.onnx", "--data", data, "--out", p(out), "--quiet"); code != 0 {
				t.Fatal(errs)
			}
		}
		code, _, errs := run(t, "fit", "--method", "dpplpublic", "--train", p("x1.arrow"), "--public", p("x2.arrow"), "--epsilon", "1", "--out", p("x.safetensors"))
		if code != 1 || !strings.Contains(errs, "public data must not") {
			t.Errorf("another extraction of the source as public: exit %d, %q", code, errs)
		}
		// DP-Mix_Diff's public partners: not the private images.
		for _, with := range []string{data, filepath.Join(data, "cat")} {
			code, _, errs = run(t, "extract", "--encoder", "../testdata/encoders/tiny-cnn.onnx", "--data", data, "--out", p("mix.arrow"),
				"--views", "2", "--augment", "flip", "--mix-with", with, "--mix-diff", "1", "--quiet")
			if code != 1 || !strings.Contains(errs, "never private ones") {
				t.Errorf("--mix-with %s: exit %d, %q", with, code, errs)
			}
		}
	}
}
