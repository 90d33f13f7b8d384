package cli

import (
	"bytes"
	"encoding/json"
	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/synth"
	"github.com/dpfeat/dpfeat/ledger"
	"github.com/dpfeat/dpfeat/sweep"
	"github.com/dpfeat/dpfeat/synthbasis"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMain keeps every test's budget ledgers in a temporary folder, never
// the user's, and removes the binary the process tests built.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dpfeat-ledger-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("DPFEAT_LEDGER", dir)
	cache, err := os.MkdirTemp("", "dpfeat-cache-test")
	if err != nil {
		panic(err)
	}
	os.Setenv(synthbasis.CacheEnv, cache) // extract's synthetic bases, not the user's cache
	code := m.Run()
	os.RemoveAll(dir)   // made by MkdirTemp above
	os.RemoveAll(cache) // the same
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath)) // buildBinary's folder (135 MB a run, once left behind)
	}
	os.Exit(code)
}

// TestBudgetLedger: with a budget set on a training file, fits are
// recorded before their classifier is written and refused past the
// budget (nothing written); --force records the overspend; a
// non-private reference is refused; show lists it all.
func TestBudgetLedger(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.arrow")
	blobFile(t, train, 300, 6, []string{"a", "b", "c"}, "sha-1", 1)
	ledgerDir := filepath.Join(dir, "ledger")
	if code, _, errs := run(t, "budget", "init", "--features", train, "--epsilon", "1.8", "--delta", "1e-5", "--ledger", ledgerDir); code != 0 {
		t.Fatalf("init: %d %s", code, errs)
	}
	if code, _, errs := run(t, "budget", "init", "--features", train, "--epsilon", "9", "--delta", "1e-5", "--ledger", ledgerDir); code != 1 || !strings.Contains(errs, "already set") {
		t.Errorf("second init: %d %s", code, errs)
	}
	fit := func(i int, extra ...string) (int, string, string) {
		out := filepath.Join(dir, "c"+string(rune('0'+i))+".safetensors")
		args := append([]string{"fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", out, "--ledger", ledgerDir}, extra...)
		code, _, errs := run(t, args...)
		return code, out, errs
	}
	// ε = 1 each: GDP composes two to less than 1.8, three to about 1.97.
	for i := 0; i < 2; i++ {
		if code, _, errs := fit(i); code != 0 || !strings.Contains(errs, "budget ledger") {
			t.Fatalf("fit %d: %d %s", i, code, errs)
		}
	}
	code, out, errs := fit(2)
	if code != 1 || !strings.Contains(errs, "exceed the privacy budget") {
		t.Errorf("third fit: %d %s", code, errs)
	}
	// A fit asking for more than the whole budget is refused before any work.
	if code, _, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "5", "--delta", "1e-5", "--out", filepath.Join(dir, "big.safetensors"), "--ledger", ledgerDir); code != 1 || !strings.Contains(errs, "more than the data's whole budget") {
		t.Errorf("fit above the whole budget: %d %s", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused fit wrote its classifier")
	}
	// --force replaces an output and nothing else (#37 item 3): a fit
	// past the budget with it is refused, and the earlier releases keep
	// their record.
	if code, _, errs := fit(0, "--force"); code != 1 || !strings.Contains(errs, "exceed the privacy budget") {
		t.Errorf("--force past the budget: %d %s", code, errs)
	}
	if code, _, errs := fit(3, "--overspend"); code != 0 || !strings.Contains(errs, "WARNING: --overspend") {
		t.Errorf("fit --overspend: %d %s", code, errs)
	}
	// Now the budget is spent: the next fit stops before reading the data.
	if code, _, errs := fit(4); code != 1 || !strings.Contains(errs, "is spent") {
		t.Errorf("fit on a spent budget: %d %s", code, errs)
	}
	code, _, errs = run(t, "fit", "--method", "ls", "--train", train, "--epsilon", "inf", "--out", filepath.Join(dir, "ref.safetensors"), "--ledger", ledgerDir)
	if code != 1 || !strings.Contains(errs, "non-private release would spend all") {
		t.Errorf("reference fit on budgeted data: %d %s", code, errs)
	}
	code, stdout, errs := run(t, "budget", "show", "--features", train, "--ledger", ledgerDir, "--json")
	if code != 0 {
		t.Fatalf("show: %d %s", code, errs)
	}
	var rep budgetReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Releases) != 3 || !rep.Releases[2].Forced || float64(rep.Spent) <= 1.8 || rep.Remaining != 0 || rep.Accountant != "gdp" {
		t.Errorf("show: %+v", rep)
	}
	// Another file without a data identity (#36 item 5): it may be the
	// data of a ledger in a form that lost its identity, so it is refused
	// while ledgers exist, unless said to be other data (then its fits go
	// unrecorded).
	other := filepath.Join(dir, "other.arrow")
	blobFile(t, other, 300, 6, []string{"a", "b", "c"}, "sha-1", 2)
	otherFit := func(extra ...string) (int, string) {
		code, _, errs := run(t, append([]string{"fit", "--method", "dpls", "--train", other, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, "o.safetensors"), "--force", "--ledger", ledgerDir}, extra...)...) // (--force: o.safetensors may exist)
		return code, errs
	}
	if code, errs := otherFit(); code != 1 || !strings.Contains(errs, "--other-data") {
		t.Errorf("fit of a file without identity while ledgers exist: %d %s", code, errs)
	}
	if code, errs := otherFit("--other-data"); code != 0 || strings.Contains(errs, "budget ledger") {
		t.Errorf("fit --other-data: %d %s", code, errs)
	}
	// A convert of budgeted data keeps its identity where the format can
	// hold it (.npz, Parquet), and finds its ledger (a fit past its budget
	// is refused); a CSV loses it and is refused while ledgers exist.
	extracted := filepath.Join(dir, "extracted.arrow")
	meta := features.Metadata{Classes: []string{"a", "b", "c"}, EncoderSHA256: "sha-1", EncoderName: "enc", DataID: "data:sha256:0123"}
	if err := synth.WriteClusters(extracted, 300, 6, meta, 0.7, 3, nil); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, "budget", "init", "--features", extracted, "--epsilon", "0.5", "--delta", "1e-5", "--ledger", ledgerDir); code != 0 {
		t.Fatal(errs)
	}
	for _, ext := range []string{".npz", ".parquet", ".csv"} {
		conv := filepath.Join(dir, "conv"+ext)
		if code, _, errs := run(t, "convert", "--in", extracted, "--out", conv); code != 0 {
			t.Fatalf("convert %s: %s", ext, errs)
		}
		code, _, errs := run(t, "fit", "--method", "dpls", "--train", conv, "--classes", "a,b,c", "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, "x"+ext+".safetensors"), "--ledger", ledgerDir)
		if ext == ".csv" && (code != 1 || !strings.Contains(errs, "carries no data identity")) || ext != ".csv" && (code != 1 || !strings.Contains(errs, "whole budget")) {
			t.Errorf("fit on the budgeted data converted to %s: %d %s", ext, code, errs)
		}
	}
}

// TestBudgetRepair: a damaged ledger blocks fits with a pointer to
// budget repair; a torn last line is dropped; an edited line needs
// --spend-all, after which the budget counts as spent.
func TestBudgetRepair(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.arrow")
	blobFile(t, train, 300, 6, []string{"a", "b", "c"}, "sha-1", 1)
	ledgerDir := filepath.Join(dir, "ledger")
	if code, _, errs := run(t, "budget", "init", "--features", train, "--epsilon", "8", "--delta", "1e-5", "--ledger", ledgerDir); code != 0 {
		t.Fatal(errs)
	}
	fit := func(name string) (int, string) {
		code, _, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, name+".safetensors"), "--ledger", ledgerDir)
		return code, errs
	}
	for _, n := range []string{"a", "b"} {
		if code, errs := fit(n); code != 0 {
			t.Fatal(errs)
		}
	}
	files, _ := filepath.Glob(filepath.Join(ledgerDir, "*.ledger"))
	if len(files) != 1 {
		t.Fatalf("ledgers: %v", files)
	}
	data, _ := os.ReadFile(files[0])
	os.WriteFile(files[0], data[:len(data)-20], 0o644)
	if code, errs := fit("c"); code != 1 || !strings.Contains(errs, "dpfeat budget repair") {
		t.Errorf("fit on a torn ledger: %d %s", code, errs)
	}
	code, stdout, errs := run(t, "budget", "repair", "--features", train, "--ledger", ledgerDir)
	if code != 0 || !strings.Contains(stdout, "never completed") || !strings.Contains(stdout, "repaired 20") {
		t.Fatalf("repair of a torn line: %d %s %s", code, stdout, errs)
	}
	if code, errs := fit("c"); code != 0 {
		t.Errorf("fit after the repair: %s", errs)
	}
	data, _ = os.ReadFile(files[0])
	os.WriteFile(files[0], []byte(strings.Replace(string(data), `"output":"`, `"output":"x`, 1)), 0o644)
	if code, _, errs := run(t, "budget", "repair", "--features", train, "--ledger", ledgerDir); code != 1 || !strings.Contains(errs, "--spend-all") {
		t.Errorf("repair of an edited line without --spend-all: %d %s", code, errs)
	}
	if code, stdout, errs := run(t, "budget", "repair", "--features", train, "--ledger", ledgerDir, "--spend-all"); code != 0 || !strings.Contains(stdout, "left: ε = 0") {
		t.Errorf("repair --spend-all: %d %s %s", code, stdout, errs)
	}
	if code, errs := fit("d"); code != 1 || !strings.Contains(errs, "is spent") {
		t.Errorf("fit after a spend-all repair: %d %s", code, errs)
	}
}

func TestAuditCommand(t *testing.T) {
	code, stdout, errs := run(t, "audit", "--method", "dpplmean", "--epsilon", "4", "--runs", "60", "--json")
	if code != 0 || !strings.Contains(stdout, `"mu_lower_bound"`) {
		t.Errorf("audit: %d %s %s", code, stdout, errs)
	}
	if code, _, errs := run(t, "audit", "--method", "ls", "--epsilon", "4", "--runs", "60"); code != 1 || !strings.Contains(errs, "not private") {
		t.Errorf("audit of a reference: %d %s", code, errs)
	}
	if code, _, errs := run(t, "audit", "--method", "dpls", "--epsilon", "4", "--runs", "60", "--transform-subspace", "3"); code != 1 || !strings.Contains(errs, "--transform-subspace needs --transform whiten") {
		t.Errorf("audit --transform-subspace without whiten: exit %d, %q", code, errs)
	}
	if code, _, errs := run(t, "audit", "--method", "dpls", "--epsilon", "4", "--runs", "60", "--transform", "whiten", "--transform-subspace", "99"); code != 1 || !strings.Contains(errs, "within at most the 8 features' directions") {
		t.Errorf("audit --transform-subspace wider than the features: exit %d, %q", code, errs)
	}
	if code, stdout, errs := run(t, "audit", "--method", "dpls", "--epsilon", "40", "--runs", "60", "--transform", "whiten", "--transform-subspace", "3", "--json"); code != 0 || !strings.Contains(stdout, "whiten transform") {
		t.Errorf("audit --transform whiten --transform-subspace 3: exit %d\n%s\n%s", code, stdout, errs)
	}
	if code, _, errs := run(t, "audit", "--method", "dpls", "--epsilon", "4", "--runs", "5"); code != 1 || !strings.Contains(errs, "at least 20 runs") {
		t.Errorf("too few runs: %d %s", code, errs)
	}
}

// TestSweepSpendsTheBudget: a sweep over a budgeted training file costs
// all its jobs first and is refused before any job when they do not fit
// (it once ran jobs until the budget ran out: 41 of 57 failed mid-way);
// when they fit, each job is recorded.
func TestSweepSpendsTheBudget(t *testing.T) {
	dir, train, ledgerDir, cfg, out := budgetedSweep(t, "1.3", "methods: {dpls: {}}\nepsilons: [1]\ndelta: 1e-5\nseeds: 3\n")
	// Three releases of ε = 1 compose (GDP) to about 1.83 > 1.3.
	code, _, errs := run(t, "sweep", "--config", cfg, "--out", out, "--ledger", ledgerDir, "--jobs", "1")
	if code != 1 || !strings.Contains(errs, "do not fit its budget, so none was run") || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
		t.Fatalf("sweep past the budget: %d %s", code, errs)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused sweep wrote results")
	}
	releases := func() int {
		code, outText, _ := run(t, "budget", "show", "--features", train, "--ledger", ledgerDir, "--json")
		var st struct {
			Releases []json.RawMessage `json:"releases"`
		}
		if code != 0 || json.Unmarshal([]byte(outText), &st) != nil {
			t.Fatalf("budget show: %d %s", code, outText)
		}
		return len(st.Releases)
	}
	if n := releases(); n != 0 {
		t.Errorf("a refused sweep recorded %d releases", n)
	}
	// With room for all three, every job runs and is recorded.
	cfg2 := filepath.Join(dir, "s2.yaml")
	os.WriteFile(cfg2, []byte("datasets: [{train: train.arrow, test: test.arrow}]\nmethods: {dpls: {}}\nepsilons: [0.5]\ndelta: 1e-5\nseeds: 3\n"), 0o644)
	if code, _, errs := run(t, "sweep", "--config", cfg2, "--out", out, "--ledger", ledgerDir, "--jobs", "1"); code != 0 {
		t.Fatalf("sweep within the budget: %d %s", code, errs)
	}
	if code, _, _ := run(t, "export", "--results", out, "--format", "json", "--out", filepath.Join(dir, "r.json")); code != 0 {
		t.Fatal("export")
	}
	b, _ := os.ReadFile(filepath.Join(dir, "r.json"))
	var rows []map[string]any
	json.Unmarshal(b, &rows)
	for _, r := range rows {
		if r["error"] != nil && r["error"] != "" || r["test_accuracy"] == nil {
			t.Errorf("a job within the budget failed: %v", r)
		}
	}
	if len(rows) != 3 || releases() != 3 {
		t.Errorf("%d rows, %d releases", len(rows), releases())
	}
	// Spend the rest: a new sweep is refused before any work.
	if code, _, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, "f.safetensors"), "--ledger", ledgerDir, "--overspend"); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := run(t, "sweep", "--config", cfg, "--out", filepath.Join(dir, "r2.arrow"), "--ledger", ledgerDir); code != 1 || !strings.Contains(errs, "is spent") {
		t.Errorf("sweep on a spent budget: %d %s", code, errs)
	}
}

// TestPrivateSelectionSpendsTheBudget: a private selection is recorded as
// one release, known by its RDP curve; the ledger composes it by RDP.
func TestPrivateSelectionSpendsTheBudget(t *testing.T) {
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow")
	blobFile(t, train, 300, 6, []string{"a", "b", "c"}, "sha-1", 1)
	blobFile(t, test, 150, 6, []string{"a", "b", "c"}, "sha-1", 2)
	ledgerDir := filepath.Join(dir, "ledger")
	if code, _, errs := run(t, "budget", "init", "--features", train, "--epsilon", "5", "--delta", "1e-5", "--ledger", ledgerDir); code != 0 {
		t.Fatal(errs)
	}
	cfg := filepath.Join(dir, "s.yaml")
	os.WriteFile(cfg, []byte("datasets: [{train: train.arrow, test: test.arrow, validation: '0.2'}]\nmethods: {dpfc: {lr: [4, 8]}}\nepsilons: [2]\ndelta: 1e-5\nseeds: 1\nselection: {mode: private, mean: 3}\n"), 0o644)
	if code, _, errs := run(t, "sweep", "--config", cfg, "--out", filepath.Join(dir, "r.arrow"), "--ledger", ledgerDir); code != 0 {
		t.Fatalf("sweep: %d %s", code, errs)
	}
	code, stdout, errs := run(t, "budget", "show", "--features", train, "--ledger", ledgerDir, "--json")
	if code != 0 {
		t.Fatal(errs)
	}
	var rep budgetReport
	json.Unmarshal([]byte(stdout), &rep)
	if len(rep.Releases) != 1 || rep.Accountant != "rdp" || float64(rep.Spent) > 2 || float64(rep.Spent) < 1 {
		t.Errorf("after a private selection at ε = 2: %d releases, spent %v (%s)", len(rep.Releases), rep.Spent, rep.Accountant)
	}
}

// TestBudgetLeftMeansIt (#37 item 4): "left" was the budget less what was
// spent, which understates what one more release can take (Gaussian
// releases compose sub-additively in ε). It is now the largest ε one more
// Gaussian release can take; a fit just above it is refused (nothing
// charged), and a fit at it is accepted, after which nothing is left.
func TestBudgetLeftMeansIt(t *testing.T) {
	dir, train, ledgerDir := budgetedData(t, "3")
	fit := func(name string, eps float64) (int, string) {
		code, _, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", strconv.FormatFloat(eps, 'g', -1, 64), "--delta", "1e-5",
			"--out", filepath.Join(dir, name+".safetensors"), "--ledger", ledgerDir)
		return code, errs
	}
	for _, name := range []string{"a", "b"} {
		if code, errs := fit(name, 1); code != 0 {
			t.Fatal(errs)
		}
	}
	left := func() float64 { return float64(showBudget(t, train, ledgerDir).Remaining) }
	l := left()
	if code, stdout, _ := run(t, "budget", "show", "--features", train, "--ledger", ledgerDir); code != 0 || !strings.Contains(stdout, "one more Gaussian release") {
		t.Errorf("show does not say how left is computed: %s", stdout)
	}
	spent := float64(showBudget(t, train, ledgerDir).Spent)
	if l <= 3-spent { // sub-additive: more than the subtraction
		t.Fatalf("left ε = %v after two releases of ε = 1 of a budget of 3", l)
	}
	ledgerBytes, _ := os.ReadFile(filepath.Join(ledgerDir, mustOnlyEntry(t, ledgerDir)))
	if code, errs := fit("above", l*1.02); code != 1 || !strings.Contains(errs, "exceed the privacy budget") {
		t.Errorf("a fit just above left ε = %v: %d %s", l, code, errs)
	}
	if after, _ := os.ReadFile(filepath.Join(ledgerDir, mustOnlyEntry(t, ledgerDir))); !bytes.Equal(after, ledgerBytes) {
		t.Error("a refused fit changed the ledger")
	}
	if code, errs := fit("at", l); code != 0 {
		t.Errorf("a fit at left ε = %v: %d %s", l, code, errs)
	}
	if l2 := left(); l2 > 1e-3 {
		t.Errorf("after a fit at what was left, left ε = %v", l2)
	}
}

// budgetedData writes a training file with a budget of ε = eps at
// δ = 1e-5 in a ledger folder of its own.
func budgetedData(t *testing.T, eps string) (dir, train, ledgerDir string) {
	t.Helper()
	dir = t.TempDir()
	train = filepath.Join(dir, "train.arrow")
	blobFile(t, train, 300, 6, []string{"a", "b", "c"}, "sha-1", 1)
	ledgerDir = filepath.Join(dir, "ledger")
	if code, _, errs := run(t, "budget", "init", "--features", train, "--epsilon", eps, "--delta", "1e-5", "--ledger", ledgerDir); code != 0 {
		t.Fatal(errs)
	}
	return dir, train, ledgerDir
}

// showBudget is budget show --json of train's ledger.
func showBudget(t *testing.T, train, ledgerDir string) budgetReport {
	t.Helper()
	code, stdout, errs := run(t, "budget", "show", "--features", train, "--ledger", ledgerDir, "--json")
	var rep budgetReport
	if code != 0 || json.Unmarshal([]byte(stdout), &rep) != nil {
		t.Fatalf("budget show: %d %s", code, errs)
	}
	return rep
}

// mustOnlyEntry is the one ledger file in dir.
func mustOnlyEntry(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	var files []string
	for _, e := range ents {
		if !e.IsDir() && !strings.HasSuffix(e.Name(), ".lock") {
			files = append(files, e.Name())
		}
	}
	if err != nil || len(files) != 1 {
		t.Fatalf("ledger folder %s: %v, %v", dir, files, err)
	}
	return files[0]
}

// TestForceNeverOverspends (#37 item 3): the same fit with --force run
// twice used to spend past the budget with exit 0 and re-tag the first,
// in-budget release as forced. --force replaces the output only.
func TestForceNeverOverspends(t *testing.T) {
	dir, train, ledgerDir := budgetedData(t, "1")
	out := filepath.Join(dir, "m.safetensors")
	fit := func() (int, string) {
		code, _, errs := run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "0.8", "--delta", "1e-5", "--out", out, "--force", "--ledger", ledgerDir)
		return code, errs
	}
	if code, errs := fit(); code != 0 {
		t.Fatal(errs)
	}
	model, _ := os.ReadFile(out)
	before, _ := os.ReadFile(filepath.Join(ledgerDir, mustOnlyEntry(t, ledgerDir)))
	if code, errs := fit(); code != 1 || !strings.Contains(errs, "exceed the privacy budget") || !strings.Contains(errs, "--overspend") {
		t.Errorf("the second fit --force: %d %s", code, errs)
	}
	after, _ := os.ReadFile(filepath.Join(ledgerDir, mustOnlyEntry(t, ledgerDir)))
	if !bytes.Equal(before, after) {
		t.Error("the refused fit changed the ledger")
	}
	if now, _ := os.ReadFile(out); !bytes.Equal(now, model) {
		t.Error("the refused fit replaced the classifier")
	}
	if strings.Contains(string(after), `"forced"`) {
		t.Error("an in-budget release is tagged forced")
	}
}

// TestRefusedFitChargesNothing (#37 item 2): auto and --transform charged
// the transform's share, then the budget refused the method — exit 1, no
// classifier, and the ledger moved. A fit is now one entry, charged
// before any noise as a whole: refused whole, or recorded once.
func TestRefusedFitChargesNothing(t *testing.T) {
	dir, train, ledgerDir := budgetedData(t, "1.2")
	fit := func(name string, extra ...string) (int, string) {
		code, _, errs := run(t, append([]string{"fit", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(dir, name+".safetensors"), "--ledger", ledgerDir}, extra...)...)
		return code, errs
	}
	if code, errs := fit("first", "--method", "dpls", "--transform", "whiten"); code != 0 {
		t.Fatal(errs)
	}
	releases := func() []ledger.Release { return showBudget(t, train, ledgerDir).Releases }
	rel := releases()
	if len(rel) != 1 || float64(rel[0].Guarantee.Epsilon) > 1 || !slices.ContainsFunc(rel[0].Guarantee.Mechanisms, func(m accounting.Mechanism) bool { return strings.HasPrefix(m.Name, "transform") }) {
		t.Fatalf("a fit with a transform: %d ledger releases, %+v", len(rel), rel)
	}
	before, _ := os.ReadFile(filepath.Join(ledgerDir, mustOnlyEntry(t, ledgerDir)))
	for _, args := range [][]string{{"--method", "auto"}, {"--method", "dpls", "--transform", "whiten"}} {
		code, errs := fit("second", args...)
		if code != 1 || !strings.Contains(errs, "exceed the privacy budget") || strings.Contains(errs, "is spent (") {
			t.Errorf("%v past the budget: exit %d, %s", args, code, errs)
		}
		if after, _ := os.ReadFile(filepath.Join(ledgerDir, mustOnlyEntry(t, ledgerDir))); !bytes.Equal(after, before) {
			t.Errorf("%v: the refused fit changed the ledger", args)
		}
		if _, err := os.Stat(filepath.Join(dir, "second.safetensors")); err == nil {
			t.Errorf("%v: the refused fit wrote a classifier", args)
		}
	}
}

// TestSweepOnARunnerSpendsTheBudget (#42): a sweep on a runner records
// every job in the ledger before any is submitted, each with the cost the
// budget check computed, and the workers' rows come back whole.
func TestSweepOnARunnerSpendsTheBudget(t *testing.T) {
	_, train, ledgerDir, cfg, out := budgetedSweep(t, "3", "methods: {dpls: {}, dplp: {steps: [3]}}\nepsilons: [0.5]\ndelta: 1e-5\nseeds: 2\n")
	if code, _, errs := run(t, "sweep", "--config", cfg, "--out", out, "--ledger", ledgerDir, "--runner", "prism"); code != 0 {
		t.Fatalf("sweep on a runner within the budget: %d %s", code, errs)
	}
	code, outText, _ := run(t, "budget", "show", "--features", train, "--ledger", ledgerDir, "--json")
	var st struct {
		Releases []struct {
			Method string `json:"method"`
		} `json:"releases"`
	}
	if code != 0 || json.Unmarshal([]byte(outText), &st) != nil {
		t.Fatalf("budget show: %d %s", code, outText)
	}
	methods := map[string]int{}
	for _, r := range st.Releases {
		methods[r.Method]++
	}
	if len(st.Releases) != 4 || methods["dpls"] != 2 || methods["dplp"] != 2 {
		t.Errorf("the ledger recorded %v, want two dpls and two dplp", methods)
	}
	rows, err := sweep.ReadResults(out)
	if err != nil || len(rows) != 4 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		if r.Error != "" || r.TestAccuracy == nil {
			t.Errorf("%s: error %q", r.Method, r.Error)
		}
	}
}

// budgetedSweep is the budget's sweep tests' fixture: blob train (300
// rows) and test files in a new folder, a ledger giving train a budget of
// ε = epsilon (δ = 1e-5), and a sweep configuration over them whose
// methods, ε and seeds are grid; out is the results file to write.
func budgetedSweep(t *testing.T, epsilon, grid string) (dir, train, ledgerDir, cfg, out string) {
	t.Helper()
	dir = t.TempDir()
	train, test := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow")
	blobFile(t, train, 300, 6, []string{"a", "b", "c"}, "sha-1", 1)
	blobFile(t, test, 150, 6, []string{"a", "b", "c"}, "sha-1", 2)
	ledgerDir = filepath.Join(dir, "ledger")
	if code, _, errs := run(t, "budget", "init", "--features", train, "--epsilon", epsilon, "--delta", "1e-5", "--ledger", ledgerDir); code != 0 {
		t.Fatal(errs)
	}
	cfg = filepath.Join(dir, "s.yaml")
	os.WriteFile(cfg, []byte("datasets: [{train: train.arrow, test: test.arrow}]\n"+grid), 0o644)
	return dir, train, ledgerDir, cfg, filepath.Join(dir, "r.arrow")
}
