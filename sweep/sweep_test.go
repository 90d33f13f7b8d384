package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"gonum.org/v1/plot/vg"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/synth"
	"github.com/dpfeat/dpfeat/solvers"
	// The prototype methods register with solvers.
)

// blobFile writes a labelled feature file of Gaussian clusters, long-
// tailed if imbalanced (class c keeps about a ninth of its rows).
func blobFile(t testing.TB, path string, n int, seed uint64, imbalanced bool) {
	t.Helper()
	meta := features.Metadata{Classes: []string{"a", "b", "c"}, EncoderSHA256: "sha-1", EncoderName: "enc"}
	var label func(int) int
	if imbalanced {
		meta.Subset = &features.Derivation{Kind: "imbalanced", From: "test", ImbalanceRatio: 10}
		label = func(i int) int {
			if i%3 == 2 && i%9 != 2 {
				return i % 2
			}
			return i % 3
		}
	}
	if err := synth.WriteClusters(path, n, 8, meta, 0.9, seed, label); err != nil {
		t.Fatal(err)
	}
}

// tinySweep writes the files and configuration of a small sweep.
func tinySweep(t *testing.T, extra string) (cfgPath, dir string) {
	t.Helper()
	dir = t.TempDir()
	blobFile(t, filepath.Join(dir, "train.arrow"), 600, 1, false)
	blobFile(t, filepath.Join(dir, "imb.arrow"), 600, 4, true)
	blobFile(t, filepath.Join(dir, "test.arrow"), 300, 2, false)
	blobFile(t, filepath.Join(dir, "public.arrow"), 200, 3, false)
	cfg := `
datasets:
  - name: blobs
    train: train.arrow
    validation: 0.2
    test: test.arrow
    public: public.arrow
  - name: blobs-imbalanced
    train: imb.arrow
    test: test.arrow
methods:
  dpls: {}
  dpfc: {lr: [4, 8], steps: 3}
  dpplmean: {}
  ls: {}
epsilons: [1, 8]
delta: 1e-5
seeds: 2
noise: seeded
` + extra
	cfgPath = filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfgPath, dir
}

func TestSweepEndToEnd(t *testing.T) {
	cfgPath, dir := tinySweep(t, "")
	cfg, err := LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results.arrow")
	rows, err := Run(context.Background(), cfg, RunOptions{Out: out, Jobs: 2, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	// Per dataset: 4 private settings × 2 ε × 2 seeds + ls × 2 seeds.
	if len(rows) != 2*(4*2*2+2) {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if r.Error != "" || r.TestAccuracy == nil || r.ValAccuracy == nil || r.Backend == "" || r.Version != "test" || !r.Seeded {
			t.Fatalf("row %+v", r)
		}
		if r.Private && (r.EpsilonSpent == nil || *r.EpsilonSpent > r.Epsilon || !strings.Contains(r.Tuning, "not accounted")) {
			t.Errorf("private row %s %v: spent %v, tuning %q", r.Method, r.Epsilon, r.EpsilonSpent, r.Tuning)
		}
		if r.Dataset == "blobs-imbalanced" != r.Imbalanced || (r.Imbalanced && r.TestMinority == nil) {
			t.Errorf("%s: imbalanced %v minority %v", r.Dataset, r.Imbalanced, r.TestMinority)
		}
		if _, err := time.Parse(time.RFC3339, r.Finished); err != nil {
			t.Errorf("row %s: finished %q: %v", r.Job, r.Finished, err)
		}
	}
	if _, err := os.Stat(JournalPath(out)); !os.IsNotExist(err) {
		t.Errorf("journal left after a complete sweep: %v", err)
	}
	back, err := ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(rows) || back[3].Job != rows[3].Job || *back[3].TestAccuracy != *rows[3].TestAccuracy || !math.IsInf(back[len(back)-1].Epsilon, 1) {
		t.Errorf("results read back differ")
	}

	// The summary selects by validation: the chosen dpfc setting has the
	// best median validation accuracy of the two.
	sum := Summarize(rows)
	if len(sum) != 2*7 {
		t.Fatalf("%d summary lines", len(sum))
	}
	for _, s := range sum {
		if s.Method != "dpfc" {
			continue
		}
		var vals = map[string][]float64{}
		for _, r := range rows {
			if r.Dataset == s.Dataset && r.Method == "dpfc" && r.Epsilon == s.Epsilon {
				vals[r.Setting] = append(vals[r.Setting], *r.ValAccuracy)
			}
		}
		for setting, v := range vals {
			if median(v) > s.ValMedian {
				t.Errorf("%s ε=%v: chose %q (val %v) over %q (val %v)", s.Dataset, s.Epsilon, s.Setting, s.ValMedian, setting, median(v))
			}
		}
		if s.Settings != 2 || s.Seeds != 2 || s.TestMin > s.TestMedian || s.TestMedian > s.TestMax {
			t.Errorf("dpfc summary %+v", s)
		}
	}
	exportAll(t, dir, rows, sum)
}

// exportAll writes every format and reads each back.
func exportAll(t *testing.T, dir string, rows []Row, sum []Selected) {
	var b bytes.Buffer
	if err := WriteCSV(&b, rows); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(recs) != len(rows)+1 || recs[0][0] != "job" || len(recs[1]) != len(columns) {
		t.Fatalf("csv: %v, %d records", err, len(recs))
	}
	if eps := recs[len(recs)-1][7]; eps != "inf" {
		t.Errorf("csv: a reference's ε is %q, want inf", eps)
	}

	b.Reset()
	if err := WriteJSON(&b, rows); err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	if err := json.Unmarshal(b.Bytes(), &objs); err != nil || len(objs) != len(rows) {
		t.Fatalf("json: %v, %d objects", err, len(objs))
	}
	if objs[len(objs)-1]["epsilon"] != nil || objs[0]["epsilon"] != 1.0 {
		t.Errorf("json ε: %v, %v", objs[0]["epsilon"], objs[len(objs)-1]["epsilon"])
	}

	b.Reset()
	if err := WriteParquet(&b, rows); err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tbl.NumRows() != int64(len(rows)) || int(tbl.NumCols()) != len(columns) || tbl.Schema().Field(7).Name != "epsilon" {
		t.Errorf("parquet: %d rows, %d columns", tbl.NumRows(), tbl.NumCols())
	}
	tbl.Release()

	b.Reset()
	if err := WriteNotebook(&b, "results.arrow", "test"); err != nil {
		t.Fatal(err)
	}
	checkNotebook(t, b.Bytes())

	cols, nrows := PlotLayout(sum)
	if cols != 3 || nrows != 1 {
		t.Errorf("layout %d×%d, want 3×1: two accuracy panels, one imbalance panel (the legend has its own column)", cols, nrows)
	}
	if c, r := PlotLayout(sum[:1]); c != 1 || r != 1 {
		t.Errorf("one dataset: layout %d×%d, want one panel filling the figure", c, r)
	}
	b.Reset()
	if err := WritePlot(&b, "png", sum, PlotOptions{}); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	wantW, wantH := int(float64(PanelWidth*vg.Length(cols)+LegendWidth)*PlotDPI/72), int(float64(PanelHeight)*PlotDPI/72)*nrows
	if sz := img.Bounds().Size(); sz.X != wantW || sz.Y != wantH {
		t.Errorf("png %v, want %d×%d", sz, wantW, wantH)
	}
	b.Reset()
	if err := WritePlot(&b, "svg", sum, PlotOptions{ShareY: true}); err != nil {
		t.Fatal(err)
	}
	var svg struct {
		XMLName xml.Name
		Width   string `xml:"width,attr"`
		Height  string `xml:"height,attr"`
	}
	if err := xml.Unmarshal(b.Bytes(), &svg); err != nil {
		t.Fatal(err)
	}
	if svg.XMLName.Local != "svg" || svg.Width != fmt.Sprintf("%gpt", float64(PanelWidth)*float64(cols)+float64(LegendWidth)) || svg.Height != fmt.Sprintf("%gpt", float64(PanelHeight)*float64(nrows)) {
		t.Errorf("svg %s %s×%s", svg.XMLName.Local, svg.Width, svg.Height)
	}
	if err := os.WriteFile(filepath.Join(dir, "plot.svg"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkNotebook checks the structure nbformat 4.5 requires: top-level
// keys, cells with ids, code cells with outputs and execution_count.
func checkNotebook(t *testing.T, data []byte) {
	t.Helper()
	var nb map[string]any
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatalf("notebook is not JSON: %v", err)
	}
	if nb["nbformat"] != 4.0 || nb["nbformat_minor"] != 5.0 {
		t.Errorf("nbformat %v.%v", nb["nbformat"], nb["nbformat_minor"])
	}
	md, ok := nb["metadata"].(map[string]any)
	if !ok || md["kernelspec"] == nil {
		t.Errorf("metadata %v", nb["metadata"])
	}
	cells, ok := nb["cells"].([]any)
	if !ok || len(cells) < 3 {
		t.Fatalf("cells %v", nb["cells"])
	}
	idPat := regexp.MustCompile(`^[a-zA-Z0-9-_]{1,64}$`)
	ids := map[string]bool{}
	for i, c := range cells {
		cell := c.(map[string]any)
		id, _ := cell["id"].(string)
		if !idPat.MatchString(id) || ids[id] {
			t.Errorf("cell %d: id %q", i, id)
		}
		ids[id] = true
		if _, ok := cell["metadata"].(map[string]any); !ok {
			t.Errorf("cell %d: metadata", i)
		}
		src, ok := cell["source"].([]any)
		if !ok || len(src) == 0 {
			t.Errorf("cell %d: source", i)
		}
		switch cell["cell_type"] {
		case "markdown":
			if _, has := cell["outputs"]; has {
				t.Errorf("markdown cell %d has outputs", i)
			}
		case "code":
			outs, ok := cell["outputs"].([]any)
			ec, has := cell["execution_count"]
			if !ok || len(outs) != 0 || !has || ec != nil {
				t.Errorf("code cell %d: outputs %v, execution_count %v", i, cell["outputs"], ec)
			}
		default:
			t.Errorf("cell %d: type %v", i, cell["cell_type"])
		}
		allowed := map[string]bool{"id": true, "cell_type": true, "metadata": true, "source": true, "outputs": true, "execution_count": true}
		for k := range cell {
			if !allowed[k] {
				t.Errorf("cell %d: unexpected key %q", i, k)
			}
		}
	}
}

// TestSweepResumes interrupts a sweep after a few jobs and resumes it:
// finished jobs are not run again and the result is complete.
func TestSweepResumes(t *testing.T) {
	cfgPath, dir := tinySweep(t, "")
	cfg, err := LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results.arrow")
	ctx, cancel := context.WithCancel(context.Background())
	done := 0
	_, err = Run(ctx, cfg, RunOptions{Out: out, Jobs: 1, Progress: func(f string, a ...any) {
		if strings.Contains(f, "[%d/%d]") {
			if done++; done == 5 {
				cancel()
			}
		}
	}})
	if err == nil {
		t.Fatal("an interrupted sweep reported success")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("an interrupted sweep wrote %s", out)
	}
	if err := CheckOutput(RunOptions{Out: out}); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("a journal left behind is not refused: %v", err)
	}
	ran := 0
	rows, err := Run(context.Background(), cfg, RunOptions{Out: out, Jobs: 2, Resume: true, Progress: func(f string, a ...any) {
		if strings.Contains(f, "[%d/%d]") {
			ran++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 36 || ran != 36-5 {
		t.Errorf("resumed: %d rows, %d jobs run; want 36 and %d", len(rows), ran, 36-5)
	}
	// Complete: another resume runs nothing; without a flag, refused.
	ran = 0
	if _, err := Run(context.Background(), cfg, RunOptions{Out: out, Resume: true, Progress: func(f string, a ...any) {
		if strings.Contains(f, "[%d/%d]") {
			ran++
		}
	}}); err != nil || ran != 0 {
		t.Errorf("second resume: %v, %d jobs run", err, ran)
	}
	if err := CheckOutput(RunOptions{Out: out}); err == nil {
		t.Errorf("an existing results file is not refused")
	}
}

func TestJournalTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := j.add(Row{Job: fmt.Sprint(i), Epsilon: math.Inf(1)}); err != nil {
			t.Fatal(err)
		}
	}
	j.close()
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)-7], 0o644) // a crash mid-line
	rows, torn, err := readJournal(path)
	if err != nil || !torn || len(rows) != 2 || !math.IsInf(rows[1].Epsilon, 1) {
		t.Errorf("torn journal: %d rows, torn %v, %v", len(rows), torn, err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	os.WriteFile(path, []byte(lines[0]+"garbage\n"+lines[2]), 0o644)
	if _, _, err := readJournal(path); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a bad line in the middle: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	blobFile(t, filepath.Join(dir, "train.arrow"), 60, 1, false)
	base := "datasets: [{train: train.arrow, test: train.arrow}]\nepsilons: [1]\ndelta: 1e-5\n"
	noDelta := "datasets: [{train: train.arrow, test: train.arrow}]\nepsilons: [1]\nmethods: {dpls: {}}\n"
	cases := []struct{ name, yaml, want string }{
		{"unknown key", base + "methods: {dpls: {}}\nepsilon: [2]\n", `line 5: unknown key "epsilon"`},
		{"unknown method", base + "methods: {dpxx: {}}\n", `unknown method "dpxx"`},
		{"unknown hyperparameter", base + "methods: {dpls: {lr: 1}}\n", "dpls has no hyperparameter lr"},
		// Values no job can take (#35 item 11): every job once failed, exit 0.
		{"negative clip", base + "methods: {dpsgd: {clip: [1, -1]}}\n", "hyperparameter clip must be a positive number, got -1"},
		{"steps past any run", base + "methods: {dpfc: {steps: 1e12}}\n", "hyperparameter steps must be a positive whole number"},
		{"fractional steps", base + "methods: {dpfc: {steps: 2.5}}\n", "positive whole number"},
		{"momentum of one", base + "methods: {dplp: {momentum: 1}}\n", "momentum must be in [0, 1)"},
		{"psd of two", base + "methods: {dpls: {psd: 2}}\n", "hyperparameter psd must be -1"},
		{"bad range", base + "methods: {dpfc: {lr: {log: [0, 1], num: 3}}}\n", "positive ends"},
		{"range key", base + "methods: {dpfc: {lr: {lo: 1}}}\n", `unknown range key "lo"`},
		{"no jobs", "datasets: [{train: train.arrow, test: train.arrow}]\nmethods: {dpls: {}}\ndelta: 1e-5\n", "runs no jobs"},
		{"missing file", "datasets: [{train: nope.arrow, test: train.arrow}]\nmethods: {ls: {}}\ndelta: 1e-5\n", "nope.arrow"},
		{"bad fraction", "datasets: [{train: train.arrow, test: train.arrow, validation: '1.5'}]\nmethods: {ls: {}}\ndelta: 1e-5\n", "fraction must be in (0, 1)"},
		{"optimizer elsewhere", base + "methods: {dpfc: {optimizer: adam}}\n", "only dpsgd has an optimizer"},
		{"bad optimizer", base + "methods: {dpsgd: {optimizer: rmsprop}}\n", `"rmsprop" is not one of`},
		{"bad seeds", base + "methods: {dpls: {}}\nseeds: [1, 1]\n", "seed 1 is listed twice"},
		{"bad noise", base + "methods: {dpls: {}}\nnoise: weak\n", "noise must be secure or seeded"},
		{"infinite ε", "datasets: [{train: train.arrow, test: train.arrow}]\nmethods: {dpls: {}}\nepsilons: [.inf]\ndelta: 1e-5\n", "not a positive finite ε"},
		{"selection key", base + "methods: {dpls: {}}\nselection: {mode: validation, mean: 3}\n", "belong to mode: private"},
		{"classes under selection", base + "methods: {dpls: {}}\nselection: {mode: validation, classes: [a, b]}\n", "classes"},
		{"selection of sampled dpsgd", base + "methods: {dpsgd: {batch: 10}}\nselection: {mode: private}\n", "full-batch"},
		{"empty", "", "empty configuration"},
		// δ is never defaulted (it once became 1e-5 with exit 0).
		{"delta unset", noDelta, "delta: required"},
		{"delta zero", noDelta + "delta: 0\n", "delta: 0 is not in (0, 1)"},
		{"delta underflows", noDelta + "delta: 1e-400\n", "delta: 1e-400 is not in (0, 1)"},
		{"delta one", noDelta + "delta: 1\n", "delta: 1 is not in (0, 1)"},
		// Noiseless accuracy on private validation rows is not free.
		{"public selection on a private fraction", "datasets: [{train: train.arrow, test: train.arrow, validation: '0.2'}]\nepsilons: [1]\ndelta: 1e-5\nmethods: {dpls: {}}\nselection: {mode: private, validation_public: true}\n", "fraction of its private training file"},
	}
	for _, c := range cases {
		_, err := ParseConfig([]byte(c.yaml), dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
}

func TestGridExpansion(t *testing.T) {
	dir := t.TempDir()
	blobFile(t, filepath.Join(dir, "train.arrow"), 60, 1, false)
	c, err := ParseConfig([]byte(`
datasets: [{train: train.arrow, test: train.arrow}]
methods:
  dpsgd: {optimizer: [adam, sgd], lr: {log: [0.1, 10], num: 3}, steps: [1, 2]}
  logreg: {}
epsilons: [0.5, 2]
delta: 1e-5
seeds: [7, 9]
`), dir)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	// dpsgd: 2 optimizers × 3 lr × 2 steps × 2 ε × 2 seeds; logreg: 2 seeds.
	if len(jobs) != 2*3*2*2*2+2 {
		t.Fatalf("%d jobs", len(jobs))
	}
	ids := map[string]bool{}
	lrs := map[float64]bool{}
	for _, j := range jobs {
		if ids[j.ID] {
			t.Fatalf("job id %s twice", j.ID)
		}
		ids[j.ID] = true
		if j.Method == "dpsgd" {
			lrs[j.Params["lr"]] = true
		}
	}
	if !lrs[0.1] || !lrs[1] || !lrs[10] || len(lrs) != 3 {
		t.Errorf("log range gave %v", lrs)
	}
	if s := jobs[0].Setting(); s != "lr=0.1 steps=1 optimizer=adam" {
		t.Errorf("setting %q", s)
	}
}

// TestHugeGridRefusedBeforeMaterialising (#16 item 9): a 10-line file
// asking for 10⁹ settings is counted and refused at once (it allocated
// until it died); the limit can be raised.
func TestHugeGridRefusedBeforeMaterialising(t *testing.T) {
	dir := t.TempDir()
	blobFile(t, filepath.Join(dir, "train.arrow"), 60, 1, false)
	cfg := "datasets: [{train: train.arrow, test: train.arrow}]\nepsilons: [1, 2]\ndelta: 1e-5\nseeds: 3\n" +
		"methods:\n  dpfc:\n    lr: {log: [0.1, 10], num: 1000}\n    steps: {linear: [1, 1000], num: 1000}\n    clip_grad: {log: [0.1, 10], num: 1000}\n"
	_, err := ParseConfig([]byte(cfg), dir)
	if err == nil || !strings.Contains(err.Error(), "makes 6000000000 jobs") {
		t.Fatalf("a 6·10⁹-job grid: %v", err)
	}
	small := "datasets: [{train: train.arrow, test: train.arrow}]\nepsilons: [1]\ndelta: 1e-5\nmethods: {dpfc: {lr: [1, 2, 4]}}\n"
	c, err := parseConfig([]byte(small), dir, 2)
	if err == nil || !strings.Contains(err.Error(), "more than the limit of 2") {
		t.Errorf("limit 2: %v %v", c, err)
	}
	if c, err := parseConfig([]byte(small), dir, 3); err != nil {
		t.Errorf("limit 3: %v", err)
	} else if n, _ := c.CountJobs(); n != 3 {
		t.Errorf("%d jobs counted", n)
	}
}

// TestConfigErrorsAreOneLine (#16 item 17): the YAML decoder's error for
// unknown keys lists lines; the message the user sees names every culprit
// on one line.
func TestConfigErrorsAreOneLine(t *testing.T) {
	dir := t.TempDir()
	blobFile(t, filepath.Join(dir, "train.arrow"), 30, 1, false)
	_, err := ParseConfig([]byte("datasets: [{train: train.arrow, test: train.arrow}]\nepsilon: [1]\nsedes: 2\nmethods: {dpls: {}}\n"), dir)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "epsilon") || !strings.Contains(err.Error(), "sedes") {
		t.Errorf("%q", err)
	}
}

// TestResultsWithoutLaterColumnsStillRead: a results file written before
// the noise_seed and classifier columns existed reads, with them empty.
func TestResultsWithoutLaterColumnsStillRead(t *testing.T) {
	all := columns
	defer func() { columns = all }()
	var first []column
	for _, c := range all {
		if !c.later {
			first = append(first, c)
		}
	}
	columns = first
	path := filepath.Join(t.TempDir(), "old.arrow")
	if err := WriteResults(path, []Row{{Job: "j1", Method: "dpls", Hyperparameters: "{}"}}); err != nil {
		t.Fatal(err)
	}
	columns = all
	rows, err := ReadResults(path)
	if err != nil || len(rows) != 1 || rows[0].Job != "j1" || rows[0].NoiseSeed != "" || rows[0].Classifier != "" {
		t.Fatalf("read %+v, %v", rows, err)
	}
}

// TestEncoderBasisKey: a dataset's encoder_basis: false reaches the fit
// as fit's --encoder-basis=false; unset or true leaves auto its basis.
func TestEncoderBasisKey(t *testing.T) {
	dir := t.TempDir()
	blobFile(t, filepath.Join(dir, "train.arrow"), 60, 1, false)
	for yaml, want := range map[string]bool{"": false, ", encoder_basis: true": false, ", encoder_basis: false": true} {
		c, err := ParseConfig([]byte("datasets: [{train: train.arrow, test: train.arrow"+yaml+"}]\nepsilons: [1]\ndelta: 1e-5\nmethods: {auto: {}}\n"), dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.request(Job{Method: "auto"}, &data{}, solvers.Options{}).NoEncoderBasis; got != want {
			t.Errorf("%q: NoEncoderBasis %v, want %v", yaml, got, want)
		}
	}
}
