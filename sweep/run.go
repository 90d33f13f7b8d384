package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/backend"
	"github.com/dpfeat/dpfeat/internal/interrupt"
	"github.com/dpfeat/dpfeat/internal/outlock"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/train"
)

// RunOptions control a sweep run.
type RunOptions struct {
	// Out is the results file; Out + ".journal" records finished jobs
	// while the sweep runs.
	Out string
	// Jobs is how many fits run at once (0: half the cores, at least 1:
	// each fit uses several cores itself).
	Jobs int
	// Resume continues an interrupted or extended sweep: jobs already in
	// Out or its journal are not run again. Force starts over.
	Resume, Force bool
	// Progress receives one line per finished job.
	Progress func(format string, args ...any)
	// Version is dpfeat's version, recorded in every row.
	Version string
	// Classifiers, when set, is a folder where each fitted job's
	// classifier is written (ClassifierPath), as `dpfeat fit` would write
	// it: with seeded noise, `dpfeat fit --seed` and the row's noise_seed
	// reproduce it byte for byte.
	Classifiers string
	// Charger, when set, gives the charger of a job's release (in the
	// dataset's budget ledger; nil: none), which records it before any of
	// its noise (a private selection as one release known by its RDP
	// curve); a refusal (the budget is spent) becomes the job's error,
	// without metrics.
	Charger func(dataset int, method string) accounting.Charger
	// Budget, when set, is given each dataset's pending jobs' guarantees
	// — each job calibrated without drawing noise (accounting.ErrDryRun), a
	// private selection by its RDP curve, a reference as non-private —
	// before any job runs; an error (the whole sweep would not fit the
	// dataset's budget) stops the sweep before any work.
	Budget func(dataset int, costs []accounting.Guarantee) error
	// Remote, when set, runs the pending jobs elsewhere — on a Beam
	// runner's workers, each running the jobs its JobRefs name with a
	// JobRunner (package runner) — and calls record with each finished row as soon as it is
	// back (serialised), so that the journal keeps it. Each pending job
	// is charged to its dataset's ledger (Charger) here, before any is
	// submitted, with the cost Budget checked: the workers draw the
	// noise, this process keeps the ledger.
	Remote func(ctx context.Context, jobs []Job, record func(Row) error) error
}

// JournalPath is where a sweep writing out records its finished jobs.
func JournalPath(out string) string { return out + ".journal" }

// CheckOutput refuses to overwrite results or a journal unless resuming
// or forced: run it before any work.
func CheckOutput(o RunOptions) error {
	if o.Resume && o.Force {
		return fmt.Errorf("--resume and --force exclude each other")
	}
	if o.Resume || o.Force {
		return nil
	}
	for _, p := range []string{o.Out, JournalPath(o.Out)} {
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("%s exists: pass --resume to continue that sweep (finished jobs are kept) or --force to start over", p)
		}
	}
	return nil
}

// data is a dataset as the jobs see it: the training rows stay in their
// file (train.Fit reads them, through a Cache shared by the jobs); the
// validation and test rows are loaded for evaluation.
type data struct {
	// exclude is the validation split's rule when validation is a
	// fraction of the training file: train.Fit leaves those rows out.
	exclude    *features.RowRule
	trainRows  int64
	val, test  *features.Matrix
	classes    []string
	dim        int
	counts     []int64
	imbalanced bool
	cache      *train.Cache
}

// Run runs the jobs of c that are not done yet, in parallel, and writes
// all rows to o.Out. An error or an interruption leaves the journal, so
// that --resume picks up from there.
func Run(ctx context.Context, c *Config, o RunOptions) ([]Row, error) {
	// One run owns the results and their journal at a time.
	release, err := outlock.Lock(o.Out)
	if err != nil {
		return nil, err
	}
	defer release()
	// A Ctrl-C stops the jobs; the journal keeps the finished ones.
	defer interrupt.Observe()()
	if err := CheckOutput(o); err != nil {
		return nil, err
	}
	jobs, err := c.Jobs()
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, j := range jobs {
		want[j.ID] = true
	}
	done := map[string]Row{}
	jpath := JournalPath(o.Out)
	if o.Force {
		if err := os.Remove(jpath); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if o.Resume {
		if _, err := os.Stat(o.Out); err == nil {
			prev, err := ReadResults(o.Out)
			if err != nil {
				return nil, err
			}
			for _, r := range prev {
				if want[r.Job] {
					done[r.Job] = r
				}
			}
		}
		rows, torn, err := readJournal(jpath)
		if err != nil {
			return nil, err
		}
		if torn {
			o.progress("sweep: the last line of %s was cut short (an interrupted write); that job runs again", jpath)
		}
		for _, r := range rows {
			if want[r.Job] {
				done[r.Job] = r
			}
		}
	}
	var pending []Job
	for _, j := range jobs {
		if _, ok := done[j.ID]; !ok {
			pending = append(pending, j)
		}
	}
	if len(done) > 0 {
		o.progress("sweep: %d of %d jobs already done", len(done), len(jobs))
	}
	if err := checkClassifiers(o, pending); err != nil {
		return nil, err
	}
	if len(pending) > 0 {
		sets := make([]*data, len(c.Datasets))
		for _, j := range pending {
			if sets[j.Dataset] == nil {
				if sets[j.Dataset], err = load(c, c.Datasets[j.Dataset]); err != nil {
					return nil, err
				}
			}
		}
		// Each pending job's cost, computed once: for the budget check,
		// and for the charges made here before jobs go to a runner.
		cost := map[string]accounting.Guarantee{}
		if o.Budget != nil || (o.Remote != nil && o.Charger != nil) {
			for _, j := range pending {
				g, ok, err := jobCost(ctx, c, j, sets[j.Dataset])
				if err != nil {
					return nil, err
				}
				if ok {
					cost[j.ID] = g
				}
			}
		}
		if o.Budget != nil {
			costs := make([][]accounting.Guarantee, len(c.Datasets))
			for _, j := range pending {
				if g, ok := cost[j.ID]; ok {
					costs[j.Dataset] = append(costs[j.Dataset], g)
				}
			}
			for ds, gs := range costs {
				if len(gs) > 0 {
					if err := o.Budget(ds, gs); err != nil {
						return nil, err
					}
				}
			}
		}
		jr, err := openJournal(jpath)
		if err != nil {
			return nil, err
		}
		tr := newTracker(o, len(jobs)-len(pending), len(jobs), func(r Row) error {
			done[r.Job] = r
			return jr.add(r)
		})
		if o.Remote != nil {
			err = runRemote(ctx, c, o, pending, sets, cost, tr)
		} else {
			err = runJobs(ctx, c, o, pending, sets, tr)
		}
		if cerr := jr.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	rows := make([]Row, 0, len(jobs))
	for _, j := range jobs {
		rows = append(rows, done[j.ID])
	}
	if err := WriteResults(o.Out, rows); err != nil {
		return nil, err
	}
	if err := os.Remove(jpath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return rows, nil
}

func (o RunOptions) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(format, args...)
	}
}

// tracker records finished rows (serialised) and prints a progress line
// for each.
type tracker struct {
	mu       sync.Mutex
	o        RunOptions
	record   func(Row) error
	finished int
	before   int
	total    int
	start    time.Time
}

func newTracker(o RunOptions, before, total int, record func(Row) error) *tracker {
	return &tracker{o: o, record: record, finished: before, before: before, total: total, start: time.Now()}
}

// add records row and says so.
func (t *tracker) add(row Row) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.record(row); err != nil {
		return err
	}
	t.finished++
	eta := time.Duration(float64(time.Since(t.start)) / float64(t.finished-t.before) * float64(t.total-t.finished)).Round(time.Second)
	t.o.progress("sweep: [%d/%d] %s %s %s seed %d %s: %s (%.1f s; about %s left)", t.finished, t.total, row.Dataset, row.Method,
		epsText(row.Epsilon), row.Seed, row.Setting, outcome(row), row.Seconds, eta)
	return nil
}

// runJobs runs jobs on o.Jobs workers of this process.
func runJobs(ctx context.Context, c *Config, o RunOptions, jobs []Job, sets []*data, tr *tracker) error {
	workers := o.Jobs
	if workers <= 0 {
		workers = max(1, runtime.GOMAXPROCS(0)/2)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan Job)
	var once sync.Once
	var firstErr error
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				row := runJob(ctx, c, o, j, sets[j.Dataset])
				if ctx.Err() != nil {
					return // interrupted: the job is not recorded, it runs again on --resume
				}
				if err := tr.add(row); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		}()
	}
	for _, j := range jobs {
		select {
		case next <- j:
			continue
		case <-ctx.Done():
		}
		break
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// runRemote charges the jobs their cost (RunOptions.Remote; a job
// without one fails before it calibrates, spending nothing) and hands
// those the ledger accepted to o.Remote; a refused job is recorded with
// the refusal as its error, as runJob records it.
func runRemote(ctx context.Context, c *Config, o RunOptions, jobs []Job, sets []*data, cost map[string]accounting.Guarantee, tr *tracker) error {
	var submit []Job
	for _, j := range jobs {
		if ch := o.charger(j); ch != nil {
			if g, ok := cost[j.ID]; ok {
				if err := ch.Charge(g); err != nil {
					row := newRow(c, o, j, sets[j.Dataset])
					row.Error = err.Error()
					row.Finished = time.Now().UTC().Format(time.RFC3339)
					if err := tr.add(row); err != nil {
						return err
					}
					continue
				}
			}
		}
		submit = append(submit, j)
	}
	if len(submit) == 0 {
		return nil
	}
	return o.Remote(ctx, submit, tr.add)
}

func (o RunOptions) charger(j Job) accounting.Charger {
	if o.Charger == nil {
		return nil
	}
	return o.Charger(j.Dataset, j.Method)
}

// JobRef names a job to a worker that loaded the same configuration: its
// place in Config.Jobs, the ID the submitting process gave it (an ID
// names the data files by their paths as that process spells them, and a
// worker may spell them otherwise), and what the job is, checked there.
type JobRef struct {
	Index   int    `json:"index"`
	ID      string `json:"id"`
	Dataset int    `json:"dataset"`
	Method  string `json:"method"`
	Setting string `json:"setting"`
	Epsilon string `json:"epsilon"`
	Seed    int64  `json:"seed"`
}

// Refs are the references of jobs, jobs being among all of c's.
func (c *Config) Refs(jobs []Job) ([]JobRef, error) {
	all, err := c.Jobs()
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, j := range all {
		index[j.ID] = i
	}
	refs := make([]JobRef, len(jobs))
	for k, j := range jobs {
		i, ok := index[j.ID]
		if !ok {
			return nil, fmt.Errorf("job %s is not one of the configuration's", j.ID)
		}
		refs[k] = ref(i, j)
	}
	return refs, nil
}

func ref(i int, j Job) JobRef {
	return JobRef{Index: i, ID: j.ID, Dataset: j.Dataset, Method: j.Method, Setting: j.Setting(), Epsilon: fmt.Sprint(j.Epsilon), Seed: j.Seed}
}

// JobRunner runs single jobs of a configuration, as Run runs them — what
// a Beam runner's worker holds (RunOptions.Remote). Each dataset is
// loaded once, on its first job; Run may be called concurrently.
type JobRunner struct {
	c    *Config
	o    RunOptions
	jobs []Job
	mu   sync.Mutex
	sets []*data
}

// NewJobRunner prepares c's jobs; version and classifiers are
// RunOptions's Version and Classifiers.
func NewJobRunner(c *Config, version, classifiers string) (*JobRunner, error) {
	jobs, err := c.Jobs()
	if err != nil {
		return nil, err
	}
	return &JobRunner{c: c, o: RunOptions{Version: version, Classifiers: classifiers}, jobs: jobs, sets: make([]*data, len(c.Datasets))}, nil
}

// Run runs the job ref names, under its ID, and returns its row (a failed
// fit is the row's error); an error says the job could not be run at all.
func (r *JobRunner) Run(ctx context.Context, want JobRef) (Row, error) {
	if want.Index < 0 || want.Index >= len(r.jobs) {
		return Row{}, fmt.Errorf("job %s: the configuration has %d jobs here, not %d or more (it changed since the sweep started?)", want.ID, len(r.jobs), want.Index+1)
	}
	j := r.jobs[want.Index]
	if got := ref(want.Index, j); got.Dataset != want.Dataset || got.Method != want.Method || got.Setting != want.Setting || got.Epsilon != want.Epsilon || got.Seed != want.Seed {
		return Row{}, fmt.Errorf("job %s: the configuration here has %s %s ε = %s seed %d at its place, not %s %s ε = %s seed %d (it changed since the sweep started?)",
			want.ID, got.Method, got.Setting, got.Epsilon, got.Seed, want.Method, want.Setting, want.Epsilon, want.Seed)
	}
	j.ID = want.ID
	r.mu.Lock()
	ds := r.sets[j.Dataset]
	if ds == nil {
		var err error
		if ds, err = load(r.c, r.c.Datasets[j.Dataset]); err != nil {
			r.mu.Unlock()
			return Row{}, err
		}
		r.sets[j.Dataset] = ds
	}
	r.mu.Unlock()
	return runJob(ctx, r.c, r.o, j, ds), nil
}

func epsText(e float64) string {
	if math.IsInf(e, 1) {
		return "ε=∞"
	}
	return fmt.Sprintf("ε=%g", e)
}

func outcome(r Row) string {
	if r.Error != "" {
		return "failed: " + r.Error
	}
	return fmt.Sprintf("val %.4f, test %.4f", deref(r.ValAccuracy), deref(r.TestAccuracy))
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// load reads a dataset's evaluation files and checks its training file by
// train's rules (classes, labels), through the cache its jobs' fits share:
// the training rows are never loaded here, and the validation rows split
// off by the per-row rule, if asked, are the ones every fit leaves out.
func load(c *Config, d Dataset) (*data, error) {
	cache := &train.Cache{}
	meta, dim, rows, err := cache.Check(d.Train, d.importOptions())
	if err != nil {
		return nil, err
	}
	ds := &data{classes: meta.Classes, dim: dim, trainRows: rows, cache: cache,
		imbalanced: meta.Subset != nil && meta.Subset.Kind == "imbalanced"}
	if d.valFraction > 0 {
		if ds.exclude, err = features.NewRowSplit(d.valFraction, c.SplitSeed); err != nil {
			return nil, fmt.Errorf("%s: validation split: %w", d.Train, err)
		}
		if ds.val, ds.trainRows, err = cache.Held(d.Train, d.importOptions(), ds.exclude); err != nil {
			return nil, err
		}
	} else if ds.val, err = readLike(d.Validation, meta, dim); err != nil {
		return nil, err
	}
	if ds.test, err = readLike(d.Test, meta, dim); err != nil {
		return nil, err
	}
	// Minority classes come from public quantities only: an imbalanced
	// subset's profile (its ratio and shape, chosen by design), never the
	// training file's private class counts. Other files get no minority
	// metric.
	if ds.imbalanced {
		if profile, err := features.ImbalancedCounts(1<<30, len(meta.Classes), meta.Subset.ImbalanceRatio, features.Profile(meta.Subset.Profile)); err == nil {
			for _, c := range profile {
				ds.counts = append(ds.counts, int64(c))
			}
		}
	}
	return ds, nil
}

// readLike reads an evaluation file and checks it against the training
// file's metadata and dimension: dimension, classes, encoder. A file
// without class names (another tool's) is read with the training file's
// classes, so that a class absent from it does not shift the others.
func readLike(path string, tr features.Metadata, dim int) (*features.Matrix, error) {
	m, err := features.ReadAll(path, features.ReadOptions{Import: features.ImportOptions{Expected: tr.Classes}})
	if err != nil {
		return nil, err
	}
	switch {
	case m.Dim != dim:
		return nil, fmt.Errorf("%s has %d features per row; the training file has %d", path, m.Dim, dim)
	case !train.SameClasses(m.Meta.Classes, tr.Classes):
		return nil, fmt.Errorf("%s has classes %v; the training file has %v", path, m.Meta.Classes, tr.Classes)
	case m.Meta.EncoderSHA256 != tr.EncoderSHA256:
		return nil, fmt.Errorf("%s comes from encoder %s, the training file from %s", path, m.Meta.EncoderName, tr.EncoderName)
	}
	return m, nil
}

// options are the solver options of one job.
func (c *Config) options(j Job, ds *data) solvers.Options {
	acc, _ := accounting.ParseAccountant(c.Accountant)
	o := solvers.Options{
		Privacy:   accounting.ReleaseOptions{Epsilon: j.Epsilon, Delta: j.Delta, Accountant: acc},
		Optimizer: j.Optimizer,
		Distance:  j.Distance,
		Params:    map[string]float64{},
	}
	for k, v := range j.Params {
		o.Params[k] = v
	}
	if !j.Private {
		o.Privacy.Epsilon = math.Inf(1)
	}
	if seed, ok := c.noiseSeed(j); ok {
		o.Privacy.Noise = accounting.SeededNoise(seed)
	}
	return o
}

// noiseSeed is a seeded sweep's noise seed for job j (what `dpfeat fit
// --seed` takes to reproduce the job); ok is false for secure noise.
func (c *Config) noiseSeed(j Job) (seed uint64, ok bool) {
	if c.Noise != "seeded" {
		return 0, false
	}
	h := sha256.Sum256([]byte("dpfeat sweep noise:" + j.ID))
	return binary.LittleEndian.Uint64(h[:8]), true
}

// request is the fit of job j's options on its dataset: train.Fit, the
// one way dpfeat fits a feature file, reading the training rows (less the
// validation rows) through the dataset's cache.
func (c *Config) request(j Job, ds *data, o solvers.Options) train.Request {
	d := c.Datasets[j.Dataset]
	return train.Request{Method: j.Method, Train: d.Train, Public: d.Public, NoEncoderBasis: d.EncoderBasis != nil && !*d.EncoderBasis,
		Options: o, Exclude: ds.exclude, Cache: ds.cache, Import: d.importOptions()}
}

// newRow is job j's row before it runs.
func newRow(c *Config, o RunOptions, j Job, ds *data) Row {
	d := c.Datasets[j.Dataset]
	row := Row{Job: j.ID, Dataset: d.Name, Train: d.Train, Test: d.Test, Imbalanced: ds.imbalanced, Method: j.Method,
		Private: j.Private, Epsilon: j.Epsilon, Delta: j.Delta, Seed: j.Seed, Setting: j.Setting(), Hyperparameters: "{}",
		Seeded: c.Noise == "seeded", Tuning: "hyperparameters chosen on validation (not accounted)", TrainRows: ds.trainRows,
		Backend: backend.Name(), Version: o.Version}
	if seed, ok := c.noiseSeed(j); ok && j.candidates == nil {
		// (a private selection's runs draw from one stream: no seed of
		// a single fit reproduces them)
		row.NoiseSeed = strconv.FormatUint(seed, 10)
	}
	switch {
	case !j.Private:
		row.Tuning = "non-private reference"
	case d.ValidationPublic:
		row.Tuning = "hyperparameters chosen on public validation data (no privacy cost)"
	}
	return row
}

// runJob fits and evaluates one job; failures become the row's error.
func runJob(ctx context.Context, c *Config, o RunOptions, j Job, ds *data) (row Row) {
	start := time.Now()
	row = newRow(c, o, j, ds)
	defer func() { row.Finished = time.Now().UTC().Format(time.RFC3339) }() // (row is the named result)
	if j.candidates != nil {
		selectPrivately(ctx, c, o, j, ds, &row)
		// Not its time: it grows with the number of runs K, which the
		// selection's guarantee does not cover (#36 item 6).
		row.Seconds = 0
		return row
	}
	fo := c.options(j, ds)
	// Charged before any noise, once for the whole job: a job that fails
	// after drawing noise has been charged.
	ch := o.charger(j)
	if ch != nil {
		fo.Privacy.Charger = ch
	}
	out, err := fitWith(ctx, c.request(j, ds, fo))
	row.Seconds = time.Since(start).Seconds()
	if err == nil && ch != nil && !j.Private {
		err = ch.Charge(out.Result.Guarantee) // a reference, after the fact: it draws no noise
	}
	if err == nil {
		fill(&row, j, out, ds)
		err = saveClassifier(o, j, out.Classifier, &row)
	}
	if err != nil {
		row.Error = err.Error()
	}
	return row
}

// saveClassifier writes a job's classifier to o.Classifiers (when set),
// stamped as `dpfeat fit` stamps its own, and records where.
func saveClassifier(o RunOptions, j Job, clf *models.Classifier, row *Row) error {
	if o.Classifiers == "" {
		return nil
	}
	clf.Stamp(o.Version)
	path := ClassifierPath(o.Classifiers, j.ID)
	if err := clf.Save(path); err != nil {
		return err
	}
	row.Classifier = path
	return nil
}

// checkClassifiers makes the classifier folder and refuses to replace a
// pending job's classifier unless resuming (the file is then that job's,
// from a run stopped before its row was recorded) or forced.
func checkClassifiers(o RunOptions, pending []Job) error {
	if o.Classifiers == "" {
		return nil
	}
	if err := os.MkdirAll(o.Classifiers, 0o777); err != nil {
		return fmt.Errorf("--classifiers: %w", err)
	}
	if o.Resume || o.Force {
		return nil
	}
	for _, j := range pending {
		if p := ClassifierPath(o.Classifiers, j.ID); fileExists(p) {
			return fmt.Errorf("%s exists: pass --force to replace the classifiers in %s, or --resume to continue that sweep", p, o.Classifiers)
		}
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ClassifierPath is where a sweep run with RunOptions.Classifiers = dir
// writes the classifier of the job with the given id.
func ClassifierPath(dir, job string) string {
	return filepath.Join(dir, job+".safetensors")
}

// jobCost is what job j will spend: its guarantee as calibrated (a fit
// stopped before any noise), a private selection's by its RDP curve, a
// reference's as non-private. ok is false for a job that fails before
// calibrating (it will fail the same way when run, spending nothing).
func jobCost(ctx context.Context, c *Config, j Job, ds *data) (accounting.Guarantee, bool, error) {
	if j.candidates != nil {
		g, err := selectionGuarantee(c, j)
		return g, err == nil, nil
	}
	if !j.Private {
		return accounting.NonPrivate("non-private reference"), true, nil
	}
	o := c.options(j, ds)
	o.Privacy.DryRun = true // the whole job's cost in one report
	var got *accounting.Guarantee
	o.Privacy.Charger = accounting.ChargeFunc(func(g accounting.Guarantee) error {
		got = &g
		return accounting.ErrDryRun
	})
	_, err := fitWith(ctx, c.request(j, ds, o))
	switch {
	case got != nil:
		return *got, true, nil
	case err == nil:
		return accounting.Guarantee{}, false, fmt.Errorf("internal error: %s fitted without reporting its calibration", j.Method)
	case ctx.Err() != nil:
		return accounting.Guarantee{}, false, ctx.Err()
	}
	return accounting.Guarantee{}, false, nil
}

// selectionGuarantee is a private selection's release: one mechanism
// known by its RDP curve (Papernot & Steinke 2022, Thm. 2).
func selectionGuarantee(c *Config, j Job) (accounting.Guarantee, error) {
	s := c.Selection
	ps := accounting.NewPrivateSelection(s.Eta, s.Mean)
	rho, err := ps.RunRho(j.Epsilon, j.Delta)
	if err != nil {
		return accounting.Guarantee{}, err
	}
	sel := ps.Mechanism("private selection of "+j.Method+" (Papernot & Steinke 2022, Thm. 2)", rho)
	return accounting.Account([]accounting.Mechanism{sel}, j.Delta, accounting.AccountantRDP, accounting.Options{})
}

// fitWith fits one request; a panic in a method becomes the job's error
// rather than stopping the other jobs.
func fitWith(ctx context.Context, req train.Request) (out *train.Outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	return train.Fit(ctx, req)
}

// selectPrivately is a private selection job (accounting.PrivateSelection): K runs
// of uniformly drawn candidates, each ρ-zCDP, scored on validation with
// noise of the same ρ, the best released; the guarantee includes the
// tuning.
func selectPrivately(ctx context.Context, c *Config, o RunOptions, j Job, ds *data, row *Row) {
	s := c.Selection
	ps := accounting.NewPrivateSelection(s.Eta, s.Mean)
	rho, err := ps.RunRho(j.Epsilon, j.Delta)
	if err != nil {
		row.Error = err.Error()
		return
	}
	total, err := ps.Epsilon(rho, j.Delta)
	if err != nil {
		row.Error = err.Error()
		return
	}
	mu := math.Sqrt(2 * rho)
	if ch := o.charger(j); ch != nil {
		// The whole selection is one release, known by its RDP curve,
		// charged before its first run draws any noise.
		g, err := selectionGuarantee(c, j)
		if err == nil {
			err = ch.Charge(g)
		}
		if err != nil {
			row.Error = err.Error()
			return
		}
	}
	noise := accounting.SecureNoise()
	if c.Noise == "seeded" {
		h := sha256.Sum256([]byte("dpfeat sweep selection:" + j.ID))
		noise = accounting.SeededNoise(binary.LittleEndian.Uint64(h[:8]))
	}
	m, _ := solvers.Lookup(j.Method)
	valPublic := s.ValidationPublic || c.Datasets[j.Dataset].ValidationPublic
	k := ps.DrawK(noise)
	var nval int64
	for _, y := range ds.val.Labels {
		if y >= 0 {
			nval++
		}
	}
	best, bestScore := -1, math.Inf(-1)
	var bestOut *train.Outcome
	var bestJob Job
	for run := 0; run < k; run++ {
		if ctx.Err() != nil {
			return
		}
		cand := j.candidates[accounting.IntN(noise, uint64(len(j.candidates)))]
		cj := j
		cj.candidates, cj.Params, cj.Optimizer, cj.Distance = nil, cand.params, cand.optimizer, cand.distance
		o := c.options(cj, ds)
		o.Privacy.Noise = noise.Split()
		if m.Pure {
			o.Privacy.Epsilon = 2 * mu // ε²/8 = ρ
		} else {
			o.Privacy.Accountant = accounting.AccountantGDP
			if o.Privacy.Epsilon, err = accounting.GaussianEpsilon(mu, j.Delta); err != nil {
				row.Error = err.Error()
				return
			}
		}
		score := math.Inf(-1) // a failed run scores lowest
		out, err := fitWith(ctx, c.request(cj, ds, o))
		if err == nil {
			g := out.Result.Guarantee
			if (m.Pure && float64(g.Epsilon) > 2*mu*(1+1e-12)) || (!m.Pure && (g.Mu == nil || float64(*g.Mu) > mu*(1+1e-12))) {
				row.Error = fmt.Sprintf("internal error: a run of %s spent more than the selection's per-run budget (μ = %v): %s", j.Method, mu, g)
				return
			}
			clf := out.Classifier
			// the number of right answers, an integer (sensitivity 1)
			correct := []float64{math.Round(clf.Evaluate(ds.val, nil).Accuracy * float64(nval))}
			if !valPublic {
				accounting.AddGaussian(noise, correct, 1/mu, 1) // sensitivity 1, μ-GDP
			}
			score = correct[0]
		}
		if score > bestScore || best < 0 {
			best, bestScore, bestOut, bestJob = run, score, out, cj
		}
	}
	row.Setting = bestJob.Setting()
	// What the theorem covers is released: the chosen configuration, its
	// noisy score and the guarantee — not the number of runs K (nor the
	// job's time, which grows with it), which would make the bound fall
	// back to K-fold composition (#36 item 6).
	row.Tuning = fmt.Sprintf("private selection (Papernot & Steinke 2022, Thm. 2): a random number of runs K from the %s distribution (η = %g, E[K] = %g; K itself is not released), each %.4g-zCDP; the guarantee includes the tuning; val_accuracy is the noisy count of right answers over the number of validation rows (treated as public)",
		s.Distribution, s.Eta, s.Mean, rho)
	if valPublic {
		row.Tuning += "; the validation rows are treated as public"
	}
	row.Accountant = "rdp (private selection)"
	row.EpsilonSpent = &total
	row.Rho = nil
	row.Privacy = fmt.Sprintf("(ε = %s, δ = %g)-DP including the hyperparameter selection (RDP of Papernot & Steinke Thm. 2 over per-run ρ = %.4g)", accounting.FormatUp(total), j.Delta, rho)
	if bestOut == nil {
		row.Error = "every run of the selection failed"
		return
	}
	if hp, err := json.Marshal(bestOut.Result.Hyperparameters); err == nil {
		row.Hyperparameters = string(hp)
	}
	row.NoiseMultiplier = bestOut.Result.NoiseMultiplier
	row.Seeded = bestOut.Result.Guarantee.Seeded
	clf := bestOut.Classifier
	v := clf.Evaluate(ds.val, nil)
	if nval > 0 {
		noisy := bestScore / float64(nval) // what the selection saw
		row.ValAccuracy, row.ValBalanced = &noisy, ptr(v.BalancedAccuracy)
	}
	if !valPublic {
		row.ValBalanced = nil // not released privately
	}
	t := clf.Evaluate(ds.test, ds.counts)
	row.TestAccuracy, row.TestBalanced, row.TestMinority = ptr(t.Accuracy), ptr(t.BalancedAccuracy), t.MinorityAccuracy
	if err := saveClassifier(o, bestJob, clf, row); err != nil {
		row.Error = err.Error()
	}
}

// fill records a fitted result and its validation and test metrics.
func fill(row *Row, j Job, out *train.Outcome, ds *data) {
	res := out.Result
	g := res.Guarantee
	if hp, err := json.Marshal(res.Hyperparameters); err == nil {
		row.Hyperparameters = string(hp)
	}
	if j.Private {
		e := float64(g.Epsilon)
		row.EpsilonSpent, row.Mu, row.Rho = &e, floatPtr(g.Mu), floatPtr(g.Rho)
		row.NoiseMultiplier = res.NoiseMultiplier
	}
	row.Accountant, row.Privacy, row.Seeded = string(g.Accountant), g.String(), g.Seeded
	clf := out.Classifier
	if ds.val != nil && ds.val.Rows > 0 {
		v := clf.Evaluate(ds.val, nil)
		row.ValAccuracy, row.ValBalanced = ptr(v.Accuracy), ptr(v.BalancedAccuracy)
	}
	t := clf.Evaluate(ds.test, ds.counts)
	row.TestAccuracy, row.TestBalanced, row.TestMinority = ptr(t.Accuracy), ptr(t.BalancedAccuracy), t.MinorityAccuracy
}

func ptr(v float64) *float64 { return &v }

// floatPtr converts an accountant's optional total to a plain float.
func floatPtr(f *accounting.Float) *float64 {
	if f == nil {
		return nil
	}
	v := float64(*f)
	return &v
}
