package cli

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/dpfeat/dpfeat/features"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/internal/backend"
	"github.com/dpfeat/dpfeat/internal/outlock"
	"github.com/dpfeat/dpfeat/solvers"
	fitting "github.com/dpfeat/dpfeat/train"
)

// paramFlag is a hyperparameter flag: --NAME (the name with dashes) sets
// the solver parameter NAME of every method that has it.
type paramFlag struct{ flag, param, usage string }

// paramFlags derives the hyperparameter flags from the methods' own
// descriptions (solvers.Method.Params): one flag per name, its help
// listing each method's meaning and default, methods that agree grouped.
func paramFlags() []paramFlag {
	var out []paramFlag
	seen := map[string]int{}
	type use struct{ methods, text string }
	uses := map[string][]use{}
	for _, m := range solvers.Methods() {
		for _, p := range m.Params {
			if _, ok := seen[p.Name]; !ok {
				seen[p.Name] = len(out)
				out = append(out, paramFlag{flag: strings.ReplaceAll(p.Name, "_", "-"), param: p.Name})
			}
			text := p.Doc
			if !p.Derived {
				text += " (default " + p.DefaultText() + ")"
			}
			us := uses[p.Name]
			if i := slices.IndexFunc(us, func(u use) bool { return u.text == text }); i >= 0 {
				us[i].methods += ", " + m.Name
			} else {
				us = append(us, use{m.Name, text})
			}
			uses[p.Name] = us
		}
	}
	for i, f := range out {
		var parts []string
		for _, u := range uses[f.param] {
			parts = append(parts, u.methods+": "+u.text)
		}
		out[i].usage = strings.Join(parts, "; ")
	}
	return out
}

func fitCommand() *ucli.Command {
	var names []string
	for _, m := range solvers.Methods() {
		names = append(names, fmt.Sprintf("%s (%s)", m.Name, m.Summary))
	}
	flags := []ucli.Flag{
		&ucli.StringFlag{Name: "method", Usage: "the solver (required): " + strings.Join(names, "; ")},
		&ucli.StringFlag{Name: "train", Usage: "training feature file (required)"},
		&ucli.StringFlag{Name: "epsilon", Usage: "privacy budget ε > 0, or inf for the non-private references (required)"},
		&ucli.Float64Flag{Name: "delta", Usage: "δ in (0, 1), well below 1/n (required for private methods)"},
		&ucli.StringFlag{Name: "out", Usage: "classifier file to write (required)"},
		&ucli.Float64Flag{Name: "sigma", Usage: "experts: fix the noise multiplier instead of calibrating it to ε; ε is then reported"},
		&ucli.StringFlag{Name: "accountant", Value: "auto", Usage: "auto (exact GDP for full batch, RDP for Poisson-sampled), gdp, zcdp (the papers' accounting), rdp"},
		&ucli.StringFlag{Name: "conversion", Value: "cks", Usage: "zCDP → (ε, δ): cks or simple"},
		&ucli.StringFlag{Name: "optimizer", Value: "adam", Usage: "dpsgd: sgd, momentum, adam or lamb (named with auto, it keeps DP-SGD where auto would fit dplp)"},
		&ucli.StringFlag{Name: "seed", Usage: "seed the noise (for reproduction only: the result is then not private)"},
		&ucli.BoolFlag{Name: "no-normalize", Usage: "do not scale features to unit norm first (then --clip matters)"},
		&ucli.StringSliceFlag{Name: "param", Usage: "any hyperparameter as name=value (repeatable)"},
		&ucli.StringFlag{Name: "public", Usage: "public unlabeled features of the same kind: dpplpublic(k) choose prototypes from them, dpplmean --refine refines its released prototypes on them, and a --transform is learned from them at no privacy cost (labels not needed)"},
		&ucli.StringFlag{Name: "transform", Usage: "feature transform learned before the method and stored in the classifier: " + strings.Join(solvers.TransformKinds, ", ") + " (default: none; auto chooses); privately from --transform-share of the budget, or from --public for free"},
		&ucli.IntFlag{Name: "transform-dims", Usage: "pca, whiten: keep at most this many principal directions (default: pca those above the noise, whiten all)"},
		&ucli.StringFlag{Name: "transform-basis", Usage: "public features (e.g. the encoder's own training data, extracted) whose principal directions a pca or whiten transform takes, free; the transform's mean stays private. auto uses them at small n·μ"},
		&ucli.BoolFlag{Name: "encoder-basis", Value: true, Usage: "with --method auto and without --transform-basis or --public: take the basis the features' encoder manifest names (recorded by extract; listed as public in the guarantee); --encoder-basis=false fits without it"},
		&ucli.BoolFlag{Name: "transform-basis-subspace", Usage: "with --transform whiten and --transform-basis: keep the basis's top --transform-dims directions (32 by default) as a subspace only, and whiten privately within it (what auto does at n·μ 100–300 with at most 16·D rows and D ≥ 128)"},
		&ucli.BoolFlag{Name: "transform-basis-prior", Usage: "with --transform whiten and --transform-basis: whiten privately in all D directions, and average the released second-moment matrix with the basis's (free) before learning the whitening from it (measured with dpsgd on few rows: it helps images far from the encoder's and hurts near ones; auto does not use it)"},
		&ucli.BoolFlag{Name: "distill", Usage: "with --transform and --public: replace the fitted classifier by a linear head fitted (ridge least squares) on the public rows, each labelled by the classifier, through the whole transform (free: post-processing; what auto does with public features in DPPL-Mean's bands)"},
		&ucli.IntFlag{Name: "transform-clusters", Usage: "with --transform whiten and --public: after the whitening keep only the span of this many k-means clusters of the public rows (free; the method's noise shrinks with the dimensions it sees; what auto does with public features in DPPL-Mean's bands)"},
		&ucli.StringFlag{Name: "transform-ridge", Usage: "whiten's ridge ν: " + strings.Join(solvers.TransformRidges, " or ") + " (noise: the release's noise level 2√D·σ/n, the default; sample: 4/√(n·D), n the training rows, what auto uses below n·μ = 700 and with at most 16·D rows)"},
		&ucli.Float64Flag{Name: "transform-share", Usage: "a private transform's share of the budget (of μ²), in (0, 1) (default: center 0.05, standardize 0.1, pca and whiten 0.2)"},
		&ucli.StringFlag{Name: "distance", Value: "cosine", Usage: "prototype methods: cosine or euclidean"},
		&ucli.BoolFlag{Name: "n-public", Value: true, Usage: "treat the number of training examples n as public (listed in the guarantee); --n-public=false releases a noisy n̂ from --n-share of the budget instead and uses it everywhere (dpls, dpfc, dpnewton, dpsgd, dplp)"},
		&ucli.Float64Flag{Name: "n-share", Value: 0.01, Usage: "with --n-public=false: n̂'s share of the budget (of μ²), in (0, 1)"},
		&ucli.BoolFlag{Name: "public-counts", Usage: "treat the training file's class counts as public (recorded in the guarantee): they are stored in the classifier for eval's minority classes, and dpplmean (euclidean) divides by them"},
		&ucli.BoolFlag{Name: "force", Usage: "replace --out if it exists; use --public features even if they come from another encoder"},
		overspendFlag(),
		&ucli.StringFlag{Name: "ledger", Usage: "budget ledger folder (default $DPFEAT_LEDGER, else ~/.local/share/dpfeat/ledger): a fit on data with a budget there is recorded, and refused past it"},
		&ucli.StringFlag{Name: "ledger-name", Usage: "the ledger's name, when it was set with dpfeat budget init --name"},
		&ucli.StringFlag{Name: "public-name", Hidden: true, Usage: "--train-name for the public features"},
		&ucli.StringFlag{Name: "transform-basis-name", Hidden: true, Usage: "--train-name for the basis features"},
		&ucli.StringFlag{Name: "train-name", Hidden: true, Usage: "how the guarantee and notes name the training data instead of its path (the Python package passes y)"},
		otherDataFlag(),
		&ucli.StringFlag{Name: "memory", Value: "4GiB", Usage: "dpls, dpfc, dpsgd, dpnewton: memory for the D×D statistics and, in what is left, cached features (bytes, or with KiB/MiB/GiB); more class matrices than fit are done in several passes over the file"},
		&ucli.StringFlag{Name: "budget-convention", Value: "dpfeat", Usage: "dpplpublic(k): dppl states ρ = ε²/2 as the DPPL paper does, and dpplpublick uses its exponent ε/(2Δu) (comparison only; dpfeat: ε²/8 and ε/Δu)"},
		jsonFlag(),
	}
	flags = append(flags, importFlags()...)
	flags = append(flags, runnerFlags("compute the sums the method reads — one pass (dpls, ls, dpplmean, protomean) or one per step (dpfc, dpsgd, dpnewton, newton), and a transform's — over a shard manifest's shards")...)
	for _, p := range paramFlags() {
		flags = append(flags, &ucli.Float64Flag{Name: p.flag, Usage: p.usage, DefaultText: "per method, as listed"})
	}
	return &ucli.Command{
		Name:  "fit",
		Usage: "train a classifier on a feature file with differential privacy",
		UsageText: "dpfeat fit --method M --train FEATS.arrow --epsilon E --delta D --out CLF [--seed S] [hyperparameters…] [--json]\n\n" +
			"Hyperparameters left unset get documented defaults (see the method's docs); the output says which.\n\n" +
			"Example:\n   dpfeat fit --method dpfc --train private.arrow --epsilon 1 --delta 1e-5 --out clf.safetensors",
		Flags:  flags,
		Action: fitAction,
	}
}

// fitReport is fit's --json output (SPEC: method, epsilon, delta, rho,
// accountant, noise, hyperparameters, train_rows, classes, dim, seconds).
type fitReport struct {
	Method          string               `json:"method"`
	Epsilon         accounting.Float     `json:"epsilon"`
	Delta           float64              `json:"delta"`
	Rho             *accounting.Float    `json:"rho,omitempty"`
	Mu              *accounting.Float    `json:"mu,omitempty"`
	Accountant      string               `json:"accountant"`
	Noise           map[string]any       `json:"noise"`
	Hyperparameters map[string]any       `json:"hyperparameters"`
	Defaulted       []string             `json:"defaulted"`
	TrainRows       int                  `json:"train_rows"`
	Classes         int                  `json:"classes"`
	Dim             int                  `json:"dim"`
	Seconds         float64              `json:"seconds"`
	Out             string               `json:"out"`
	Seeded          bool                 `json:"seeded"`
	Backend         string               `json:"backend"`
	Guarantee       accounting.Guarantee `json:"guarantee"`
	// Runner, with --runner, names the Beam runner that computed the
	// statistics.
	Runner string `json:"runner,omitempty"`
	// Warnings are the warnings and notes the fit printed on stderr, in
	// order, without the "dpfeat: " prefix (the Python package raises
	// each as a warning).
	Warnings []string `json:"warnings"`
}

func fitAction(c *ucli.Context) error {
	start := time.Now()
	m, train, out, err := fitArgs(c)
	if err != nil {
		return err
	}
	o, err := fitOptions(c, m)
	if err != nil {
		return err
	}
	if err := checkExtension("out", out, ".safetensors"); err != nil {
		return err
	}
	if err := refuseExisting(c, "out", out); err != nil {
		return err
	}
	imp, err := importOptions(c)
	if err != nil {
		return err
	}
	prog := newFitProgress(c.App.ErrWriter) // progress is not a message
	msgs := logMessages(c)
	defer msgs.restore()
	defer prog.done()
	o.Progress = prog.line
	budget, err := runLedger(c, train, o.Privacy.Epsilon, m.Private)
	if err != nil {
		return err
	}
	// The fit is one entry in the data's budget ledger, if it has one,
	// charged before any noise is drawn (accounting.Release): a fit past
	// the budget draws and charges nothing, and one that fails after
	// drawing noise has been charged.
	charger := newCharger(c, budget, m.Name, out)
	if charger != nil {
		o.Privacy.Charger = charger
	}
	runnerName, cleanup, err := fitRemote(c, out, train, imp, &o)
	if err != nil {
		return err
	}
	defer cleanup()
	res, err := fitting.Fit(c.Context, fitting.Request{Method: m.Name, Train: train, Public: c.String("public"), Basis: c.String("transform-basis"), NoEncoderBasis: !c.Bool("encoder-basis"), Options: o,
		NoNormalize: c.Bool("no-normalize"), PublicCounts: c.Bool("public-counts"), AnyEncoder: c.Bool("force"), Import: imp, Note: o.Note,
		TrainName: c.String("train-name"), PublicName: c.String("public-name"), BasisName: c.String("transform-basis-name")})
	if cerr := reportCharge(c, train, charger); cerr != nil {
		return cerr // refused by the budget ledger: no noise was drawn
	}
	if err != nil {
		return userErrorf("%v", err)
	}
	clf := res.Classifier
	clf.Stamp(Version)
	// A non-private reference is recorded (it spends everything, with
	// --overspend) before the classifier is written.
	if !m.Private {
		if err := spendBudget(c, budget, train, m.Name, res.Result.Guarantee, out); err != nil {
			return err
		}
	}
	if err := clf.Save(out); err != nil {
		return err
	}
	return reportFit(c, res.Result.Method, res, out, time.Since(start), runnerName, msgs.lines())
}

// fitArgs reads and checks fit's method, training file and output.
func fitArgs(c *ucli.Context) (m solvers.Method, train, out string, err error) {
	method, err := requiredString(c, "method")
	if err != nil {
		return m, "", "", err
	}
	if m, err = solvers.Lookup(method); err != nil {
		return m, "", "", userErrorf("--method: %v", err)
	}
	if train, err = requiredString(c, "train"); err != nil {
		return m, "", "", err
	}
	if out, err = requiredString(c, "out"); err != nil {
		return m, "", "", err
	}
	if err := guardOutputs(flagPaths(c, "out"), flagPaths(c, "train", "public", "transform-basis")); err != nil {
		return m, "", "", err
	}
	if err := checkMethodFlags(c, m); err != nil {
		return m, "", "", err
	}
	return m, train, out, nil
}

// fitRemote sets o.Remote for --runner: the runner's name, and what
// undoes the run's lock and scratch folder.
func fitRemote(c *ucli.Context, out, train string, imp features.ImportOptions, o *solvers.Options) (string, func(), error) {
	none := func() {}
	ro, err := runnerFrom(c)
	if err != nil || ro == nil {
		return "", none, err
	}
	release, err := outlock.Lock(out)
	if err != nil {
		return "", none, userErrorf("%v", err)
	}
	tmp, remove, err := passScratch(ro, "out", out)
	if err != nil {
		release()
		return "", none, err
	}
	cleanup := func() {
		remove()
		release()
	}
	rf, err := remoteFit(train, imp, tmp, *ro)
	if err != nil {
		cleanup()
		return "", none, userErrorf("--runner: %v", err)
	}
	o.Remote = rf
	return ro.Name(), cleanup, nil
}

// transformSpec reads the --transform flags.
func transformSpec(c *ucli.Context, m solvers.Method) (solvers.TransformSpec, error) {
	spec := solvers.TransformSpec{Kind: c.String("transform"), Dims: c.Int("transform-dims"), Share: c.Float64("transform-share"), Ridge: c.String("transform-ridge"), Subspace: c.Bool("transform-basis-subspace"), Prior: c.Bool("transform-basis-prior"), Clusters: c.Int("transform-clusters"), Distill: c.Bool("distill")}
	for _, use := range []struct {
		flag string
		set  bool
	}{{"--transform-basis-subspace", spec.Subspace}, {"--transform-basis-prior", spec.Prior}} {
		if use.set && (spec.Kind != solvers.TransformWhiten || !c.IsSet("transform-basis")) {
			return spec, userErrorf("%s needs --transform whiten and --transform-basis (auto chooses its own)", use.flag)
		}
	}
	if spec.Subspace && spec.Prior {
		return spec, userErrorf("--transform-basis-subspace and --transform-basis-prior are two uses of the basis: give one")
	}
	if c.IsSet("transform-clusters") && (spec.Kind != solvers.TransformWhiten || c.String("public") == "") {
		return spec, userErrorf("--transform-clusters needs --transform whiten and --public (auto chooses its own)")
	}
	if c.IsSet("distill") && (spec.Kind == "" || spec.Kind == solvers.TransformNone || c.String("public") == "") {
		return spec, userErrorf("--distill needs --transform and --public (auto chooses its own)")
	}
	if c.IsSet("transform-ridge") && spec.Kind == "" {
		return spec, userErrorf("--transform-ridge needs --transform whiten (auto chooses its own)")
	}
	if spec.Kind == "" && (c.IsSet("transform-dims") || c.IsSet("transform-share")) && m.Name != solvers.Auto {
		return spec, userErrorf("--transform-dims and --transform-share need --transform")
	}
	if c.IsSet("transform-share") {
		if err := accounting.CheckFraction("the transform's share", spec.Share); err != nil {
			return spec, userErrorf("--transform-share: %v", err)
		}
	}
	check := spec
	if c.String("public") != "" {
		check.Public = &solvers.Data{} // checked for its presence only
	}
	if c.IsSet("transform-basis") {
		if c.String("public") != "" {
			return spec, userErrorf("--transform-basis and --public: with --public the whole transform comes from the public features; give one")
		}
		if k := spec.Kind; k != "" && k != solvers.TransformPCA && k != solvers.TransformWhiten && m.Name != solvers.Auto {
			return spec, userErrorf("--transform-basis gives directions: it goes with --transform pca or whiten (or --method auto), not %q", k)
		}
		check.Basis = &solvers.Data{} // checked for its presence only
	}
	if err := solvers.CheckTransform(m, check); err != nil {
		return spec, userErrorf("--transform: %v", err)
	}
	return spec, nil
}

// fitOptions reads fit's flags into the solvers' options.
func fitOptions(c *ucli.Context, m solvers.Method) (solvers.Options, error) {
	o := solvers.Options{Params: map[string]float64{}}
	epsStr, err := requiredString(c, "epsilon")
	if err != nil {
		return o, err
	}
	eps, err := strconv.ParseFloat(epsStr, 64)
	if err != nil || math.IsNaN(eps) || eps <= 0 || math.IsInf(eps, -1) {
		return o, userErrorf("--epsilon must be a positive number or inf, got %q", epsStr)
	}
	o.Privacy.Epsilon, o.Privacy.Sigma = eps, c.Float64("sigma")
	if c.IsSet("optimizer") { // named, not defaulted: auto then keeps DP-SGD (solvers.ChooseAuto)
		o.Optimizer = c.String("optimizer")
	}
	// Outside this range the noise is below or above what float64
	// statistics can carry (the guarantee at 1e-6 is already ε ≈ 10¹²).
	if c.IsSet("sigma") && !(o.Privacy.Sigma >= 1e-6 && o.Privacy.Sigma <= 1e6) {
		return o, userErrorf("--sigma %v is outside [1e-6, 1e6]: give a noise multiplier a float64 release can carry, or --epsilon alone", o.Privacy.Sigma)
	}
	if o.Privacy.Accountant, err = accounting.ParseAccountant(c.String("accountant")); err != nil {
		return o, userErrorf("--accountant: %v", stripInvalid(err))
	}
	o.Privacy.Conversion = accounting.Conversion(c.String("conversion"))
	if o.Privacy.Conversion != accounting.ConversionCKS && o.Privacy.Conversion != accounting.ConversionSimple {
		return o, userErrorf("--conversion must be cks or simple, got %q", o.Privacy.Conversion)
	}
	if err := readParams(c, o.Params); err != nil {
		return o, err
	}
	if o.MemoryBudget, err = parseBytes(c.String("memory")); err != nil {
		return o, userErrorf("--memory: %v", err)
	}
	o.Distance, o.PublicCounts, o.BudgetConvention = c.String("distance"), c.Bool("public-counts"), c.String("budget-convention")
	if !c.Bool("n-public") {
		if err := accounting.CheckFraction("n̂'s share", c.Float64("n-share")); err != nil {
			return o, userErrorf("--n-share: %v", err)
		}
		if c.Bool("public-counts") {
			return o, userErrorf("--public-counts makes the class counts, and so n, public: it excludes --n-public=false")
		}
		o.Privacy.PrivateN = c.Float64("n-share")
	}
	if err := fitPrivacy(c, m, &o); err != nil {
		return o, err
	}
	if o.Transform, err = transformSpec(c, m); err != nil {
		return o, err
	}
	o.Note = func(format string, args ...any) {
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: note: "+format+"\n", args...)
	}
	return o, nil
}

// readParams reads the hyperparameter flags and --param name=value.
func readParams(c *ucli.Context, params map[string]float64) error {
	for _, p := range paramFlags() {
		if c.IsSet(p.flag) {
			params[p.param] = c.Float64(p.flag)
		}
	}
	for _, kv := range c.StringSlice("param") {
		k, v, ok := strings.Cut(kv, "=")
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil {
			return userErrorf("--param %q: expected name=number", kv)
		}
		params[strings.ReplaceAll(strings.TrimSpace(k), "-", "_")] = f
	}
	return nil
}

// fitPrivacy checks ε and δ against the method's kind
// (accounting.CheckTarget, the one rule) and sets the noise.
func fitPrivacy(c *ucli.Context, m solvers.Method, o *solvers.Options) error {
	if c.IsSet("delta") {
		o.Privacy.Delta = c.Float64("delta")
	}
	kind := solvers.KindOf(m)
	if kind == accounting.Approximate && !c.IsSet("delta") && !(math.IsInf(o.Privacy.Epsilon, 1) && o.Privacy.Sigma == 0) {
		return userErrorf("--delta is required for %s (choose it well below 1/n)", m.Name)
	}
	if err := accounting.CheckTarget(m.Name, kind, o.Privacy.Epsilon, o.Privacy.Delta, o.Privacy.Sigma); err != nil {
		if errors.Is(err, accounting.ErrDelta) {
			return userErrorf("--delta: %v", err)
		}
		return userErrorf("%v", stripInvalid(err))
	}
	if s := c.String("seed"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return userErrorf("--seed must be a non-negative whole number, got %q", s)
		}
		o.Privacy.Noise = accounting.SeededNoise(seed)
		if m.Private {
			fmt.Fprintln(c.App.ErrWriter, "dpfeat: --seed makes the noise predictable: this classifier is for reproduction only, not private")
		}
	}
	return nil
}

// reportFit prints what a fit wrote: JSON or text.
func reportFit(c *ucli.Context, method string, res *fitting.Outcome, out string, took time.Duration, runnerName string, warnings []string) error {
	g, clf := res.Result.Guarantee, res.Classifier
	rep := fitReport{Method: method, Epsilon: g.Epsilon, Delta: g.Delta, Rho: g.Rho, Mu: g.Mu, Accountant: string(g.Accountant),
		Noise: map[string]any{"multiplier": res.Result.NoiseMultiplier, "releases": g.Mechanisms}, Hyperparameters: res.Result.Hyperparameters,
		Defaulted: res.Result.Defaulted, TrainRows: res.Rows, Classes: len(clf.Classes), Dim: clf.Dim, Seconds: took.Seconds(),
		Out: out, Seeded: g.Seeded, Backend: backend.Name(), Guarantee: g, Runner: runnerName, Warnings: warnings}
	if rep.Warnings == nil {
		rep.Warnings = []string{}
	}
	if rep.Defaulted == nil {
		rep.Defaulted = []string{}
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, rep)
	}
	return printFit(c, rep)
}

func printFit(c *ucli.Context, r fitReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s on %d rows × %d features, %d classes, in %.2f s\n", r.Out, r.Method, r.TrainRows, r.Dim, r.Classes, r.Seconds)
	if r.Runner != "" {
		fmt.Fprintf(&b, "statistics: accumulated over the shards by the Beam runner %s, noise added here\n", r.Runner)
	}
	fmt.Fprintf(&b, "privacy: %s\n", r.Guarantee)
	if r.Guarantee.Accountant != accounting.AccountantNone {
		if z, _ := r.Noise["multiplier"].(float64); z > 0 {
			fmt.Fprintf(&b, "noise multiplier: %s (each release's noise std = multiplier × its L2 sensitivity)\n", accounting.FormatUp(z))
		}
		if len(r.Guarantee.Public) > 0 {
			fmt.Fprintf(&b, "treated as public: %s\n", strings.Join(r.Guarantee.Public, "; "))
		}
	}
	keys := make([]string, 0, len(r.Hyperparameters))
	for k := range r.Hyperparameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	def := map[string]bool{}
	for _, k := range r.Defaulted {
		def[k] = true
	}
	var parts []string
	for _, k := range keys {
		s := fmt.Sprintf("%s=%v", k, r.Hyperparameters[k])
		if def[k] {
			s += " (default)"
		}
		parts = append(parts, s)
	}
	fmt.Fprintf(&b, "hyperparameters: %s\n", strings.Join(parts, ", "))
	return printf(c.App.Writer, "%s", b.String())
}

// parseBytes reads a size such as 4GiB, 512MiB, 1e9 or 4096.
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v*mult >= 1<<20) || v*mult > 1<<50 {
		return 0, fmt.Errorf("expected a size of at least 1MiB such as 4GiB, 512MiB or 8e9, got %q", s)
	}
	return int64(v * mult), nil
}

// fitProgress shows a long phase's progress lines (fits, audits):
// updated in place at most four times a second on a terminal; otherwise
// (batch logs) a first line after 2 s, then one every 30 s; nothing for
// work that ends sooner.
type fitProgress struct {
	w      io.Writer
	tty    bool
	start  time.Time
	last   time.Time
	shown  bool
	logged bool
}

func newFitProgress(w io.Writer) *fitProgress {
	p := &fitProgress{w: w, start: time.Now()}
	p.last = p.start
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *fitProgress) line(format string, args ...any) {
	every := 30 * time.Second
	switch {
	case p.tty:
		every = 250 * time.Millisecond
	case !p.logged:
		every = 2 * time.Second // a log says early that a long phase has begun
	}
	now := time.Now()
	if now.Sub(p.last) < every {
		return
	}
	p.logged = true
	p.last = now
	msg := fmt.Sprintf(format, args...)
	elapsed := now.Sub(p.start).Round(time.Second)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[Kdpfeat: %s (%v)", msg, elapsed)
		p.shown = true
	} else {
		fmt.Fprintf(p.w, "dpfeat: %s (%v)\n", msg, elapsed)
	}
}

// done ends an in-place line.
func (p *fitProgress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// optionFlags are fit's flags for the options a method may read besides
// its hyperparameters (solvers.Method.Reads).
var optionFlags = []string{solvers.OptOptimizer, solvers.OptPublic, solvers.OptDistance, solvers.OptBudgetConvention, solvers.OptMemory, solvers.OptSigma, solvers.OptRunner, solvers.OptNPublic}

// checkMethodFlags refuses an option flag the method does not read, with
// the flags it does: a flag silently ignored is a setting the user thinks
// they made.
func checkMethodFlags(c *ucli.Context, m solvers.Method) error {
	reads := slices.Clone(m.Reads)
	if c.String("transform") != "" {
		reads = append(reads, solvers.OptionsForTransform...)
	}
	for _, f := range optionFlags {
		if !c.IsSet(f) || slices.Contains(reads, f) {
			continue
		}
		var its []string
		for _, p := range m.ParamNames() {
			its = append(its, "--"+strings.ReplaceAll(p, "_", "-"))
		}
		for _, r := range reads {
			if !slices.Contains(its, "--"+r) {
				its = append(its, "--"+r)
			}
		}
		list := "no other flags"
		if len(its) > 0 {
			list = strings.Join(its, ", ")
		}
		return userErrorf("--%s is not used by %s (it reads %s)", f, m.Name, list)
	}
	return nil
}

// messageLog passes a command's stderr through and keeps its messages
// (whole lines that start "dpfeat: ") for the JSON report.
type messageLog struct {
	c       *ucli.Context
	w       io.Writer
	partial []byte
	msgs    []string
}

// logMessages makes c's stderr a messageLog until restore.
func logMessages(c *ucli.Context) *messageLog {
	m := &messageLog{c: c, w: c.App.ErrWriter}
	c.App.ErrWriter = m
	return m
}

func (m *messageLog) Write(p []byte) (int, error) {
	m.partial = append(m.partial, p...)
	for {
		i := bytes.IndexByte(m.partial, '\n')
		if i < 0 {
			break
		}
		if line := string(m.partial[:i]); strings.HasPrefix(line, "dpfeat: ") {
			m.msgs = append(m.msgs, strings.TrimPrefix(line, "dpfeat: "))
		}
		m.partial = m.partial[i+1:]
	}
	return m.w.Write(p)
}

func (m *messageLog) restore()        { m.c.App.ErrWriter = m.w }
func (m *messageLog) lines() []string { return m.msgs }
