package solvers

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/internal/memsize"
	"github.com/dpfeat/dpfeat/internal/phases"
	"github.com/dpfeat/dpfeat/preprocessing"
)

// Data is a training set in the form the solvers use: N rows of D float64
// features (already preprocessed: see Prepare), labels 0..M−1.
type Data struct {
	X       []float64
	Y       []int32
	N, D, M int
	// Groups, when not nil, says how many consecutive rows each private
	// example has (its views: groups.go); nil when every row is its own
	// example. The rows of one example share its label, unless W says
	// otherwise.
	Groups []int32
	// W, when not nil, weighs each row within its example (CheckGroups):
	// an example's rows add Σ_r (W_r/Σ W)·(their term), so a soft label
	// λ·y + (1 − λ)·y′ (DP-Mix_Diff's mixup with a public image) is two
	// rows of the same features, labels y and y′, weights λ and 1 − λ.
	// Every method's terms are linear in the label's one-hot target, so
	// the pair adds the soft label's term. nil: every row weighs 1.
	W []float64
}

// Row returns row i of X.
func (d *Data) Row(i int) []float64 { return d.X[i*d.D : (i+1)*d.D] }

// rowRange returns rows lo..hi−1 as a Data that shares d's memory.
func (d *Data) rowRange(lo, hi int) *Data {
	return &Data{X: d.X[lo*d.D : hi*d.D], Y: d.Y[lo:hi], N: hi - lo, D: d.D, M: d.M}
}

// Options are a fit's privacy target, noise source and hyperparameters.
type Options struct {
	// Privacy is what the caller asks of the fit's privacy — the target
	// (ε, δ) or a fixed noise multiplier, the accountant, the noise
	// source, the Charger that records the cost (a budget ledger), a dry
	// run, a private n, the test and audit hooks — each field's contract
	// stated in accounting.ReleaseOptions. Fit makes its one owner from it
	// (accounting.NewRelease), which every method uses through Release.
	Privacy accounting.ReleaseOptions
	// Params are the hyperparameters the user set, by name (see each
	// method's documentation); the others are defaulted.
	Params map[string]float64
	// Optimizer is dpsgd's optimizer: sgd, momentum, adam or lamb.
	Optimizer string
	// Remote, when set, computes the sums a method reads from the
	// training data elsewhere — the one-pass methods' statistics
	// (AccumulateWith), each pass of an iterative method and of a
	// transform (pass.go) — over the shards of a dataset on a distributed
	// runner (package runner), instead of from the rows the method is
	// given: each contribution is bounded as on one machine, and the noise
	// is still added here.
	Remote Remote
	// Progress, when set, receives one line per iteration (or per pass
	// and class of a long computation); callers throttle it.
	Progress func(format string, args ...any)
	// Note, when set, receives one-off messages the user should see,
	// such as a computation taking several passes over the data.
	Note func(format string, args ...any)
	// Public is unlabeled public data (prepared like the training data),
	// for the methods that select public prototypes; a *Data in memory or
	// a file streamed block by block (FileSource).
	Public PublicSource
	// PublicPath names Public's file as a runner's workers open it (an
	// absolute path, or one on object storage), for the passes that read
	// it there (PassPublicUtilities); "" when Public is not a file.
	PublicPath string
	// Distance is the prototype methods' distance: cosine or euclidean.
	Distance string
	// PublicCounts lets DPPL-Mean divide by the true class counts, an
	// assumption the guarantee then records.
	PublicCounts bool
	// NoNormalize keeps features at their scale: streaming methods read
	// it; the in-memory ones get rows Prepare made (normalised or not, as
	// this says) and record it in their Result.Prep.
	NoNormalize bool
	// MemoryBudget bounds, in bytes, what streaming methods hold: the D×D
	// accumulators (classes are processed in chunks, one pass each, when
	// all do not fit) and, where the rest allows, the preprocessed rows
	// kept between passes (0: 4 GiB).
	MemoryBudget int64
	// Transform asks for a feature transform learned before the method
	// (transform.go).
	Transform TransformSpec
	// BudgetConvention "dppl" states the exponential-mechanism methods'
	// zCDP equivalent as the DPPL paper does (ρ = ε²/2), for comparison with
	// its figures; the mechanism is the same.
	BudgetConvention string
	// rel owns the fit's privacy (made by Fit from Privacy).
	rel *accounting.Release
	// auto is why auto chose the method being fitted ("" otherwise).
	auto string
	// gate is how a gated transform's test came out ("" when not gated;
	// TransformSpec.Gate).
	gate string
	// examples is the true number of training examples (n; below the
	// rows when examples have several rows).
	examples int
	// method is the name of the method being fitted, for its messages.
	method string
	// learned is the transform learned before the method (nil: none), which
	// Remote applies to the rows its sums are taken over.
	learned *preprocessing.Transform
	// whole is the public whitening before its cluster span (nil: no
	// span kept): what a distilled head reads.
	whole *preprocessing.Transform
}

// Result is a fitted linear one-vs-all model with its guarantee.
type Result struct {
	// W holds M×Dim weights, row-major; B the M biases. Dim is the
	// dimension of the preprocessed features (see Prepare).
	W, B []float64
	// Prep is the feature preprocessing the model expects.
	Prep Preprocessing
	// Guarantee is the privacy statement (AccountantNone for references).
	Guarantee accounting.Guarantee
	// NoiseMultiplier is z: each release's noise std is z times its
	// sensitivity.
	NoiseMultiplier float64
	// Method is the method that ran: the one asked for, or auto's choice.
	Method string
	// Hyperparameters are all settings used; Defaulted lists those the user
	// did not set.
	Hyperparameters map[string]any
	Defaulted       []string
	// RowsReleased is n̂ when the fit released a noisy number of rows
	// (Options.Privacy.PrivateN), else 0.
	RowsReleased float64
	// Prototypes, for the prototype methods instead of W and B: M×K
	// prototypes of dimension Dim (after Prep's pooling), PerClass = K,
	// compared by Distance.
	Prototypes []float64
	PerClass   int
	Distance   string
	// read lists the hyperparameters the method read (see finish).
	read []string
}

// Preprocessing of features before a solver sees them, in this order:
// unit L2 norm (Normalize, the default: a per-example map, free of privacy
// cost), average pooling of Pool consecutive features (prototypes),
// multiplication by Scale (if not 0), subtraction of Center (dplp's
// private mean), clipping to L2 norm Clip.
type Preprocessing = preprocessing.Preprocessing

// Method is one solver.
type Method struct {
	Name string
	// Private is false for the ε = ∞ references.
	Private bool
	// Pure marks pure ε-DP methods (the exponential mechanism): δ is not
	// needed.
	Pure bool
	// Summary is a line for help texts.
	Summary string
	// Params describes the hyperparameters the method reads
	// (Options.Params), with their defaults: the command line's flags and
	// help, --param checking, the sweep's grid keys and the audit's
	// settings are derived from it. Any other name is refused before the
	// fit, and a method that reads an undeclared one panics.
	Params []Param
	// Reads lists the fit options beyond Params that the method reads
	// (OptOptimizer, OptPublic, …): the command line refuses the others'
	// flags rather than ignore them.
	Reads []string
	// Check, when set, refuses options the method cannot use together
	// (a hyperparameter that needs an option not given), before anything
	// is learned or released: Fit calls it after CheckParams, and auto
	// on the method it chose.
	Check func(o *Options) error
	// Features, for the logistic methods, says how they see a row
	// (BiasFeatures) and what they clip; nil for the others.
	Features *FeatureMap
	Run      func(ctx context.Context, d *Data, o *Options) (*Result, error)
	// Stream, when set, fits from a stream of rows in passes, with memory
	// independent of the number of rows (FitRows); Fit then streams its
	// in-memory data through it.
	Stream func(ctx context.Context, rows Rows, m int, o *Options) (*Result, error)
}

// The fit options a method may read besides its hyperparameters
// (Method.Reads), named as their flags.
const (
	OptOptimizer        = "optimizer"         // Options.Optimizer
	OptPublic           = "public"            // Options.Public
	OptDistance         = "distance"          // Options.Distance
	OptBudgetConvention = "budget-convention" // Options.BudgetConvention
	OptMemory           = "memory"            // Options.MemoryBudget
	OptSigma            = "sigma"             // Options.Privacy.Sigma
	OptNPublic          = "n-public"          // Options.Privacy.PrivateN: the method uses n, so a private n releases n̂
	// OptRunner: the method reads the training data only through
	// AccumulateWith (one pass) or Passes (pass.go), so that a runner can
	// compute them (Options.Remote).
	OptRunner = "runner"
)

// OptionsForTransform are the options any method reads when a feature
// transform is learned first (TransformSpec): its public rows, and the
// memory for its D×D statistics.
var OptionsForTransform = []string{OptPublic, OptMemory, OptNPublic}

var methods = map[string]Method{}

// FeatureMap describes a logistic method's view of a row: u =
// BiasFeatures(x, C), C the value of hyperparameter Clip (fixed at 1 when
// ""), with per-example gradients clipped jointly over the classes to the
// value of GradClip ("": not clipped).
type FeatureMap struct{ Clip, GradClip string }

// Clips returns the features' norm C and the gradients' clip (0: none) of
// method under the user's settings.
func (f FeatureMap) Clips(method string, set map[string]float64) (c, grad float64) {
	c = 1
	if f.Clip != "" {
		c, _ = Setting(method, f.Clip, set)
	}
	if f.GradClip != "" {
		grad, _ = Setting(method, f.GradClip, set)
	}
	return c, grad
}

// Register adds a method; packages with further methods (prototypes)
// register theirs from init.
func Register(m Method) { methods[m.Name] = m }

// Methods lists the registered methods in name order.
func Methods() []Method {
	var out []Method
	for _, m := range methods {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns a method by name.
func Lookup(name string) (Method, error) {
	m, ok := methods[strings.ToLower(name)]
	if !ok {
		var names []string
		for _, m := range Methods() {
			names = append(names, m.Name)
		}
		return Method{}, fmt.Errorf("unknown method %q (known: %s)", name, strings.Join(names, ", "))
	}
	return m, nil
}

// Fit runs a method. Private methods need a finite ε > 0 and δ ∈ (0, 1) (or
// a fixed Sigma); references need ε = +Inf.
func Fit(ctx context.Context, name string, d *Data, o Options) (*Result, error) {
	m, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	m, t, err := begin(ctx, m, DataRows(d), d.M, &o)
	if err != nil {
		return nil, err
	}
	if t != nil {
		d = transformData(d, t)
	}
	var res *Result
	if m.Stream != nil {
		res, err = m.Stream(ctx, DataRows(d), d.M, &o)
	} else {
		res, err = m.Run(ctx, d, &o)
	}
	return finish(ctx, m, res, err, t, &o)
}

// FitRows runs a streaming method over rows of m classes, reading them in
// passes: memory does not grow with the number of rows.
func FitRows(ctx context.Context, name string, rows Rows, classes int, o Options) (*Result, error) {
	m, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if m.Stream == nil {
		return nil, fmt.Errorf("%s does not stream; load the data and use Fit", m.Name)
	}
	if classes < 2 {
		return nil, fmt.Errorf("%d class(es); a classifier needs at least 2", classes)
	}
	m, t, err := begin(ctx, m, rows, classes, &o)
	if err != nil {
		return nil, err
	}
	if m.Stream == nil {
		panic("solvers: auto chose " + m.Name + ", which does not stream") // every choice does
	}
	if t != nil {
		rows = transformRows{rows, t}
	}
	res, err := m.Stream(ctx, rows, classes, &o)
	return finish(ctx, m, res, err, t, &o)
}

// begin is what Fit and FitRows do before the method runs on rows of
// classes classes, in this order:
// check the settings and make the fit's privacy owner, replace auto by its
// choice (releasing n̂ first under a private n), and learn the transform
// (nil: none), which the public features then pass through too.
func begin(ctx context.Context, m Method, rows Rows, classes int, o *Options) (Method, *preprocessing.Transform, error) {
	if err := prepareOptions(m, o, int(rows.Len()), int(ExamplesOf(rows))); err != nil {
		return m, nil, err
	}
	m, err := resolveAuto(m, ExamplesOf(rows), rows.Dim(), classes, o)
	if err != nil {
		return m, nil, err
	}
	t, err := learnTransform(ctx, m, rows, o)
	if err != nil || t == nil {
		return m, nil, err
	}
	o.learned = t
	if o.Public != nil {
		o.Public = transformSource{o.Public, t}
	}
	return m, t, nil
}

// Streams reports whether a method fits from a stream of rows.
func Streams(name string) bool {
	m, err := Lookup(name)
	return err == nil && m.Stream != nil
}

// prepareOptions checks the settings and makes the fit's privacy owner:
// rows is the number of rows a release sums at most, examples the number
// of training examples (what n̂ counts).
func prepareOptions(m Method, o *Options, rows, examples int) error {
	if err := m.check(o); err != nil {
		return err
	}
	rel, err := accounting.NewRelease(m.Name, m.kind(), o.Privacy)
	if err != nil {
		return err
	}
	rel.SetRows(rows)
	if o.Privacy.PrivateN > 0 {
		if err := rel.PrivateCount("noisy number of training examples n̂", "n", int64(examples), o.Privacy.PrivateN); err != nil {
			return err
		}
	}
	o.rel, o.examples, o.method = rel, examples, m.Name
	if o.Params == nil {
		o.Params = map[string]float64{}
	}
	return nil
}

// check is CheckParams, then the method's own Check.
func (m Method) check(o *Options) error {
	if err := CheckParams(m.Name, o.Params); err != nil {
		return err
	}
	if m.Check != nil {
		return m.Check(o)
	}
	return nil
}

// KindOf is what m promises (accounting.CheckTarget).
func KindOf(m Method) accounting.ReleaseKind { return m.kind() }

// kind is what m promises (accounting.CheckTarget).
func (m Method) kind() accounting.ReleaseKind {
	switch {
	case !m.Private:
		return accounting.Reference
	case m.Pure:
		return accounting.PureDP
	}
	return accounting.Approximate
}

func finish(ctx context.Context, m Method, res *Result, err error, t *preprocessing.Transform, o *Options) (*Result, error) {
	if err != nil {
		return nil, err
	}
	if t != nil && o.Transform.Distill && o.Transform.Public != nil {
		whole := cmp.Or(o.whole, t)
		if err := distillHead(ctx, res, t, whole, o.Transform.Public, o); err != nil {
			return nil, err
		}
		if m.Private {
			o.rel.Assume(accounting.Assumption{Kind: accounting.AssumePublicFeatures, Uses: []string{"a least-squares head is fitted on them, each labelled by the private classifier"}})
		}
		t = whole
	}
	res.Method = m.Name
	recordTransform(res, t, o.Transform, m.Private)
	for k, v := range map[string]string{"transform_gate": o.gate, "auto": o.auto} {
		if v != "" {
			if res.Hyperparameters == nil {
				res.Hyperparameters = map[string]any{}
			}
			res.Hyperparameters[k] = v
		}
	}
	for _, k := range res.read {
		if _, ok := m.Param(k); !ok {
			panic(fmt.Sprintf("solvers: %s reads hyperparameter %q but does not declare it in Method.Params", m.Name, k))
		}
	}
	for _, v := range append(append(append([]float64(nil), res.W...), res.B...), res.Prototypes...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s produced a non-finite model (the system is too ill-conditioned for these hyperparameters; raise lambda)", m.Name)
		}
	}
	if m.Private {
		// The feature dimension and the class list come from the file's
		// schema.
		o.rel.Assume(accounting.Assumption{Kind: accounting.AssumeSchema})
	}
	o.rel.Finish(&res.Guarantee)
	return res, nil
}

func (d *Data) check() error {
	switch {
	case d.N < 1:
		return fmt.Errorf("no training rows")
	case d.M < 2:
		return fmt.Errorf("%d class(es); a classifier needs at least 2", d.M)
	case len(d.X) != d.N*d.D || len(d.Y) != d.N:
		return fmt.Errorf("data shape: %d values and %d labels for %d×%d", len(d.X), len(d.Y), d.N, d.D)
	}
	if err := CheckGroups(d.Groups, d.Y, d.W); err != nil {
		return err
	}
	// Every class count is accepted, zero included. The class list is
	// public, and a private fit must not branch on private counts: a class
	// with no rows gets statistics that are pure noise, so a dataset and
	// its neighbour that empties a class cannot be told apart by success
	// or failure (and nothing is printed about empty classes).
	for i, y := range d.Y {
		if y < 0 || int(y) >= d.M {
			return fmt.Errorf("row %d: label %d out of range 0..%d (unlabeled rows cannot train a classifier)", i, y, d.M-1)
		}
	}
	return nil
}

// Release is the owner of the fit's privacy (accounting.Release): its
// target, calibration, charge, noise and assumptions.
func (o *Options) Release() *accounting.Release { return o.rel }

// Calibrate returns the noise multiplier z of the method's releases and
// the whole fit's guarantee, charged before any of the method's noise
// (accounting.Release.Calibrate; n̂ first when n is private).
func (o *Options) Calibrate(build func(z float64) []accounting.Mechanism) (float64, accounting.Guarantee, error) {
	return o.rel.Calibrate(build)
}

// Rows returns the number of training examples a method may use: total
// when n is assumed public (listed by publicN), else the noisy n̂,
// released on the first call (accounting.Release.Count).
func (o *Options) Rows(total int64) (float64, error) { return o.rel.Count(total) }

// Gaussian releases values in place with Gaussian noise of nominal std
// for a release of L2 sensitivity sens (accounting.Release.Gaussian) and
// returns the std used.
func (o *Options) Gaussian(release string, values []float64, std, sens float64) float64 {
	defer phases.Start("noise")()
	return o.rel.Gaussian(release, values, std, sens)
}

// Symmetric releases the symmetric d×d matrix a in place with symmetric
// Gaussian noise (accounting.Release.Symmetric) and returns the diagonal
// std.
func (o *Options) Symmetric(release string, a []float64, d int, std, sens float64) float64 {
	defer phases.Start("noise")()
	return o.rel.Symmetric(release, a, d, std, sens)
}

// callbackMu serialises Progress calls, which may come from the workers
// of a parallel loop.
var callbackMu sync.Mutex

func (o *Options) progress(format string, args ...any) {
	if o.Progress != nil {
		callbackMu.Lock()
		defer callbackMu.Unlock()
		o.Progress(format, args...)
	}
}

func (o *Options) released(release string, index int, std float64, values []float64) {
	o.rel.Report(release, index, std, values)
}

func (o *Options) note(format string, args ...any) {
	if o.Note != nil {
		o.Note(format, args...)
	}
}

// memoryBudget is MemoryBudget or its default, 4 GiB.
// squares refuses, before any allocation, a method whose k D×D float64
// matrices that cannot be split further (the Gram and one class's, the
// covariance and its factor) exceed the memory budget: then
// --memory could not be honoured (D = 40,000 once allocated 12.8 GB and
// died under a 4 GiB budget).
func (o *Options) squares(features, D, k int) error {
	need := float64(k) * float64(D) * float64(D) * 8
	if need > float64(o.memoryBudget()) {
		return fmt.Errorf("%s on %d features needs about %s for its %d×%d statistics, more than the memory budget (--memory %s): raise --memory, or reduce the dimension (e.g. --k-pool, or a smaller encoder)",
			o.method, features, memsize.String(need), D, D, memsize.String(float64(o.memoryBudget())))
	}
	return nil
}

func (o *Options) memoryBudget() int64 { return memsize.Or(o.MemoryBudget) }

// publicN records in the guarantee that the method uses the number of
// training rows: noisy sums are divided by n and default hyperparameters
// scale with it, so n is treated as public, as the papers do — unless n̂
// was released, whose mechanism is in the guarantee.
func publicN(o *Options, res *Result, n int) {
	if nHat, ok := o.rel.Counted(); ok {
		res.RowsReleased = nHat
		return
	}
	o.rel.Assume(PublicN(n, "used to normalise noisy sums and to scale default hyperparameters"))
}

// PublicN is the assumption that the true number of training examples n
// is public (add/remove adjacency: n itself differs between neighbours),
// saying what uses it. Every private output that uses or stores n makes
// it: the solvers that divide by n, a classifier file storing train_rows,
// finetune's sampling rate.
func PublicN(n int, use string) accounting.Assumption {
	return accounting.Assumption{Kind: accounting.AssumeN, N: n, Uses: []string{use}}
}

// PublicSource streams unlabeled public feature rows, prepared like the
// training rows.
type PublicSource interface {
	Dim() int
	Rows() int
	// Each calls fn with consecutive blocks of rows, in order; a block is
	// row-major, Dim() values per row, and only valid during the call.
	Each(fn func(block []float64, rows int) error) error
}

// PublicBlock is the number of public rows handed out at a time.
const PublicBlock = 2048

// Dim returns D (Data is a PublicSource).
func (d *Data) Dim() int { return d.D }

// Rows returns N.
func (d *Data) Rows() int { return d.N }

// Each hands out the rows in blocks of PublicBlock.
func (d *Data) Each(fn func(block []float64, rows int) error) error {
	for start := 0; start < d.N; start += PublicBlock {
		b := min(PublicBlock, d.N-start)
		if err := fn(d.X[start*d.D:(start+b)*d.D], b); err != nil {
			return err
		}
	}
	return nil
}

// firstError returns the first non-nil error of a parallel loop's.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
