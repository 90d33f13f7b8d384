package sweep

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/objstore"
	"github.com/dpfeat/dpfeat/solvers"
)

// Config is a sweep: datasets × methods (with hyperparameter grids) × ε ×
// seeds. See the package documentation for the file format.
type Config struct {
	Datasets []Dataset `yaml:"datasets"`
	// Methods maps a method name to its grid: hyperparameter name → a
	// number, a list, or a range {log|linear: [lo, hi], num: n}; and the
	// option keys optimizer (dpsgd), distance (prototype methods).
	Methods  map[string]map[string]yaml.Node `yaml:"methods"`
	Epsilons []float64                       `yaml:"epsilons"`
	Delta    float64                         `yaml:"delta"`
	// Seeds is a count (seeds 1..n) or a list.
	Seeds yaml.Node `yaml:"seeds"`
	// Noise is secure (the default: seeds only number repetitions) or
	// seeded (each job's noise is derived from its seed and settings:
	// reproducible, for reproduction only).
	Noise string `yaml:"noise"`
	// SplitSeed seeds the validation split of datasets that take a
	// fraction of their training file.
	SplitSeed  uint64 `yaml:"split_seed"`
	Accountant string `yaml:"accountant"`
	// Selection is how the summary picks hyperparameters: validation (the
	// papers' practice, not accounted) or a private selection.
	Selection *Selection `yaml:"selection"`

	dir   string
	seeds []int64
	// deltaText is delta as written in the file, for error messages.
	deltaText string
	// MaxJobs refuses a grid of more jobs (0: DefaultMaxJobs); set it
	// before parsing with LoadConfigLimit.
	MaxJobs int64 `yaml:"-"`
}

// Dataset names the feature files of one experiment. Relative paths are
// relative to the configuration file.
type Dataset struct {
	Name  string `yaml:"name"`
	Train string `yaml:"train"`
	// Validation is a feature file, or a fraction of the training rows
	// split off by a per-row rule (features.RowSplit, keyed by
	// split_seed); default 0.1.
	Validation string `yaml:"validation"`
	Test       string `yaml:"test"`
	// Public is unlabeled public data for dpplpublic and dpplpublick.
	Public string `yaml:"public"`
	// ValidationPublic says the validation rows are public data (a
	// labelled public set): choosing hyperparameters on them costs no
	// privacy, and the rows say so.
	ValidationPublic bool `yaml:"validation_public"`
	// EncoderBasis false keeps auto from the basis the training file's
	// encoder manifest names (fit --encoder-basis=false); unset or true,
	// auto takes it, as fit does.
	EncoderBasis *bool `yaml:"encoder_basis"`
	// Classes fixes the class list of a training file without class names
	// (another tool's), as fit --classes does; otherwise the label values
	// give it, and the guarantee lists it as assumed public.
	Classes []string `yaml:"classes"`
	// OtherData says a training file without a data identity holds none
	// of the data whose budgets the ledgers keep (fit --other-data).
	OtherData bool `yaml:"other_data"`

	valFraction float64
}

// Selection configures private hyperparameter selection (Papernot &
// Steinke 2022): see PrivateSelection.
type Selection struct {
	Mode string `yaml:"mode"` // validation (default) or private
	// Distribution of the number of runs: logarithmic (η = 0), geometric
	// (η = 1) or negbin (η given), truncated at 0; Mean is E[K].
	Distribution string  `yaml:"distribution"`
	Eta          float64 `yaml:"eta"`
	Mean         float64 `yaml:"mean"`
	// ValidationPublic treats the validation rows as public: their
	// accuracy is used as it is. Otherwise it gets Gaussian noise at
	// the runs' privacy level.
	ValidationPublic bool `yaml:"validation_public"`
}

// optionKeys are grid keys that are not numeric hyperparameters.
var optionKeys = map[string][]string{
	"optimizer": {"sgd", "momentum", "adam", "lamb"},
	"distance":  {"cosine", "euclidean"},
}

// Job is one fit: a dataset, a method with its settings, ε, δ and a seed.
type Job struct {
	Dataset   int
	Method    string
	Private   bool
	Epsilon   float64
	Delta     float64
	Seed      int64
	Params    map[string]float64
	Optimizer string
	Distance  string
	// ID identifies the job across runs (resume): a hash of its settings
	// and of its data files' names, sizes and modification times.
	ID string
	// candidates, for a private selection, are the settings it draws from
	// (Params, Optimizer and Distance are then unset).
	candidates []setting
}

// Setting is the job's hyperparameters as a stable, readable string.
func (j Job) Setting() string {
	if j.candidates != nil {
		var names []string
		for _, c := range j.candidates {
			names = append(names, Job{Params: c.params, Optimizer: c.optimizer, Distance: c.distance}.Setting())
		}
		return fmt.Sprintf("private selection among %d: %s", len(names), strings.Join(names, " | "))
	}
	var parts []string
	for _, k := range sortedKeys(j.Params) {
		parts = append(parts, fmt.Sprintf("%s=%s", k, strconv.FormatFloat(j.Params[k], 'g', -1, 64)))
	}
	if j.Optimizer != "" {
		parts = append(parts, "optimizer="+j.Optimizer)
	}
	if j.Distance != "" {
		parts = append(parts, "distance="+j.Distance)
	}
	if len(parts) == 0 {
		return "defaults"
	}
	return strings.Join(parts, " ")
}

// LoadConfig reads and checks a sweep configuration: unknown keys, unknown
// methods or hyperparameters, missing files and empty grids are errors
// that name the file and key.
func LoadConfig(path string) (*Config, error) { return LoadConfigLimit(path, DefaultMaxJobs) }

// LoadConfigLimit is LoadConfig refusing grids of more than maxJobs jobs.
func LoadConfigLimit(path string, maxJobs int64) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	c, err := parseConfig(data, filepath.Dir(path), maxJobs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseConfig parses a configuration whose relative paths are relative to
// dir.
func ParseConfig(data []byte, dir string) (*Config, error) {
	return parseConfig(data, dir, DefaultMaxJobs)
}

func parseConfig(data []byte, dir string, maxJobs int64) (*Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("empty configuration")
		}
		var te *yaml.TypeError
		if errors.As(err, &te) {
			// one line: "line 2: unknown key epsilon; line 3: …"
			var parts []string
			for _, e := range te.Errors {
				parts = append(parts, unknownField.ReplaceAllString(e, `unknown key "$1"`))
			}
			return nil, fmt.Errorf("%s", strings.Join(parts, "; "))
		}
		return nil, err
	}
	c.dir, c.MaxJobs = dir, maxJobs
	c.deltaText = scalarText(data, "delta")
	return &c, c.check()
}

// scalarText returns the text of a top-level scalar key as written ("" when
// absent or not a scalar).
func scalarText(data []byte, key string) string {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
		return ""
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.ScalarNode {
			return m.Content[i+1].Value
		}
	}
	return ""
}

func (c *Config) check() error {
	if len(c.Datasets) == 0 {
		return fmt.Errorf("datasets: none given; each needs train and test feature files")
	}
	names := map[string]bool{}
	for i := range c.Datasets {
		d := &c.Datasets[i]
		where := fmt.Sprintf("datasets[%d]", i)
		if d.Train == "" || d.Test == "" {
			return fmt.Errorf("%s: train and test are required", where)
		}
		if d.Classes != nil {
			if err := features.CheckClassNames(d.Classes); err != nil || len(d.Classes) < 2 {
				return fmt.Errorf("%s: classes: %v; expected at least two distinct names", where, err)
			}
		}
		if d.Name == "" {
			d.Name = strings.TrimSuffix(filepath.Base(d.Train), filepath.Ext(d.Train))
		}
		if names[d.Name] {
			return fmt.Errorf("%s: the name %q is used twice", where, d.Name)
		}
		names[d.Name] = true
		d.Train, d.Test = c.resolve(d.Train), c.resolve(d.Test)
		if d.Public != "" {
			d.Public = c.resolve(d.Public)
		}
		if d.ValidationPublic && d.Validation == "" {
			return fmt.Errorf("%s: validation_public needs a validation file (a fraction of train is private)", where)
		}
		switch f, err := strconv.ParseFloat(d.Validation, 64); {
		case d.Validation == "":
			d.valFraction = 0.1
		case err == nil:
			if d.ValidationPublic {
				return fmt.Errorf("%s: validation_public needs a validation file (a fraction of train is private)", where)
			}
			if _, err := features.NewRowSplit(f, 0); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			d.valFraction = f
		default:
			d.Validation = c.resolve(d.Validation)
		}
		for _, p := range []string{d.Train, d.Test, d.Validation, d.Public} {
			if p == "" || d.valFraction > 0 && p == d.Validation {
				continue
			}
			if _, err := objstore.Size(context.Background(), p); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	if len(c.Methods) == 0 {
		return fmt.Errorf("methods: none given")
	}
	for name := range c.Methods {
		if _, err := solvers.Lookup(name); err != nil {
			return fmt.Errorf("methods: %w", err)
		}
	}
	for _, e := range c.Epsilons {
		if !(e > 0) || math.IsInf(e, 0) {
			return fmt.Errorf("epsilons: %v is not a positive finite ε (the non-private references run without one)", e)
		}
	}
	// δ is never defaulted: an unset, zero or underflowing delta would
	// otherwise become a weaker guarantee than the one written.
	switch {
	case c.deltaText == "" && c.Delta == 0:
		return fmt.Errorf("delta: required (a number in (0, 1), e.g. 1e-5; it is never defaulted)")
	case accounting.CheckDelta(c.Delta) != nil && c.deltaText != "":
		return fmt.Errorf("delta: %s is not in (0, 1) as a float64 (read as %v)", c.deltaText, c.Delta)
	case accounting.CheckDelta(c.Delta) != nil:
		return fmt.Errorf("delta: %w", accounting.CheckDelta(c.Delta))
	}
	var err error
	if c.seeds, err = parseSeeds(c.Seeds); err != nil {
		return fmt.Errorf("seeds: %w", err)
	}
	switch c.Noise {
	case "":
		c.Noise = "secure"
	case "secure", "seeded":
	default:
		return fmt.Errorf("noise must be secure or seeded, got %q", c.Noise)
	}
	if c.Accountant == "" {
		c.Accountant = "auto"
	}
	if _, err := accounting.ParseAccountant(c.Accountant); err != nil {
		return fmt.Errorf("accountant: %w", err)
	}
	if c.Selection == nil {
		c.Selection = &Selection{Mode: "validation"}
	}
	if err := c.Selection.check(); err != nil {
		return fmt.Errorf("selection: %w", err)
	}
	if c.Selection.ValidationPublic {
		for _, d := range c.Datasets {
			if d.valFraction > 0 {
				return fmt.Errorf("selection: validation_public: true, but dataset %q validates on a fraction of its private training file; give it a public validation file or drop validation_public", d.Name)
			}
		}
	}
	// Count before materialising anything: a 10-line file can ask for 10⁹.
	n, err := c.CountJobs()
	if err != nil {
		return err
	}
	limit := c.MaxJobs
	if limit == 0 {
		limit = DefaultMaxJobs
	}
	if n > limit {
		return fmt.Errorf("the grid makes %d jobs, more than the limit of %d: shrink the grid or raise it with --max-jobs", n, limit)
	}
	if n == 0 {
		return fmt.Errorf("the grid runs no jobs (private methods need epsilons)")
	}
	_, err = c.Jobs() // within the limit now: checks every setting
	return err
}

// DefaultMaxJobs bounds a sweep's jobs unless Config.MaxJobs says more.
const DefaultMaxJobs = 100_000

// CountJobs returns how many jobs Jobs would make, without making them
// (saturating at the largest int64).
func (c *Config) CountJobs() (int64, error) {
	mul := func(a, b int64) int64 {
		if a != 0 && b > math.MaxInt64/a {
			return math.MaxInt64
		}
		return a * b
	}
	var total int64
	for range c.Datasets {
		for _, method := range sortedKeys(c.Methods) {
			m, err := solvers.Lookup(method)
			if err != nil {
				return 0, fmt.Errorf("methods: %w", err)
			}
			axes, err := c.axes(method)
			if err != nil {
				return 0, err
			}
			sets := int64(1)
			for _, a := range axes {
				sets = mul(sets, int64(a.len()))
			}
			if c.selects(m) {
				sets = 1 // one job draws from all settings
			}
			n := mul(mul(int64(len(c.epsilons(m))), sets), int64(len(c.seeds)))
			if total > math.MaxInt64-n {
				return math.MaxInt64, nil
			}
			total += n
		}
	}
	return total, nil
}

// epsilons are the targets a method runs at: the sweep's, or ε = ∞ once
// for a non-private reference.
func (c *Config) epsilons(m solvers.Method) []float64 {
	if !m.Private {
		return []float64{math.Inf(1)}
	}
	return c.Epsilons
}

// selects reports whether a method's settings are one private selection
// per (ε, seed) rather than one job each.
func (c *Config) selects(m solvers.Method) bool {
	return m.Private && c.Selection.Mode == "private"
}

func (c *Config) resolve(p string) string {
	if filepath.IsAbs(p) || objstore.IsRemote(p) || c.dir == "" {
		return p
	}
	return filepath.Join(c.dir, p)
}

func parseSeeds(n yaml.Node) ([]int64, error) {
	switch n.Kind {
	case 0:
		return []int64{1}, nil
	case yaml.ScalarNode:
		k, err := strconv.Atoi(n.Value)
		if err != nil || k < 1 || k > 10000 {
			return nil, fmt.Errorf("a count from 1 to 10000 or a list of integers, got %q", n.Value)
		}
		out := make([]int64, k)
		for i := range out {
			out[i] = int64(i + 1)
		}
		return out, nil
	case yaml.SequenceNode:
		var out []int64
		if err := n.Decode(&out); err != nil || len(out) == 0 {
			return nil, fmt.Errorf("a count or a non-empty list of integers (line %d)", n.Line)
		}
		seen := map[int64]bool{}
		for _, s := range out {
			if seen[s] {
				return nil, fmt.Errorf("seed %d is listed twice", s)
			}
			seen[s] = true
		}
		return out, nil
	}
	return nil, fmt.Errorf("a count or a list of integers (line %d)", n.Line)
}

// values expands one grid entry: a number, a list of numbers, or a range.
func values(n yaml.Node) ([]float64, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		v, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			return nil, fmt.Errorf("expected a number, got %q", n.Value)
		}
		return []float64{v}, nil
	case yaml.SequenceNode:
		var out []float64
		if err := n.Decode(&out); err != nil {
			return nil, fmt.Errorf("expected a list of numbers")
		}
		return out, nil
	case yaml.MappingNode:
		var r struct {
			Log    []float64 `yaml:"log"`
			Linear []float64 `yaml:"linear"`
			Num    int       `yaml:"num"`
		}
		for i := 0; i < len(n.Content); i += 2 {
			if k := n.Content[i].Value; k != "log" && k != "linear" && k != "num" {
				return nil, fmt.Errorf("unknown range key %q (log, linear, num)", k)
			}
		}
		if err := n.Decode(&r); err != nil {
			return nil, err
		}
		lohi := r.Linear
		if (r.Log == nil) == (r.Linear == nil) {
			return nil, fmt.Errorf("a range needs one of log: [lo, hi] or linear: [lo, hi]")
		}
		if r.Log != nil {
			lohi = r.Log
		}
		if len(lohi) != 2 || r.Num < 1 || r.Num > 1000 {
			return nil, fmt.Errorf("a range needs [lo, hi] and num from 1 to 1000")
		}
		lo, hi := lohi[0], lohi[1]
		if r.Log != nil && !(lo > 0 && hi > 0) {
			return nil, fmt.Errorf("a log range needs positive ends")
		}
		out := make([]float64, r.Num)
		for i := range out {
			t := 0.0
			if r.Num > 1 {
				t = float64(i) / float64(r.Num-1)
			}
			if r.Log != nil {
				out[i] = math.Exp(math.Log(lo) + t*(math.Log(hi)-math.Log(lo)))
			} else {
				out[i] = lo + t*(hi-lo)
			}
			// 12 significant digits: settings print and hash stably.
			out[i], _ = strconv.ParseFloat(strconv.FormatFloat(out[i], 'g', 12, 64), 64)
		}
		return out, nil
	}
	return nil, fmt.Errorf("expected a number, a list or a range")
}

func strs(n yaml.Node) ([]string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return []string{n.Value}, nil
	case yaml.SequenceNode:
		var out []string
		if err := n.Decode(&out); err != nil {
			return nil, fmt.Errorf("expected a list of names")
		}
		return out, nil
	}
	return nil, fmt.Errorf("expected a name or a list of names")
}

// settings expands a method's grid into its settings.
type setting struct {
	params    map[string]float64
	optimizer string
	distance  string
}

// axis is one key of a method's grid with its values, parsed: numbers
// for a hyperparameter, names for an option key (optimizer, distance).
type axis struct {
	key, name string
	nums      []float64
	strs      []string
	option    bool
}

func (a axis) len() int {
	if a.option {
		return len(a.strs)
	}
	return len(a.nums)
}

// axes parses a method's grid, key by key in name order (CountJobs counts
// them, settings checks and expands them).
func (c *Config) axes(method string) ([]axis, error) {
	grid := c.Methods[method]
	var out []axis
	for _, key := range sortedKeys(grid) {
		node := grid[key]
		a := axis{key: key, name: strings.ReplaceAll(key, "-", "_")}
		var err error
		if _, a.option = optionKeys[a.name]; a.option {
			if a.strs, err = strs(node); err != nil {
				return nil, fmt.Errorf("methods.%s.%s: %w", method, key, err)
			}
		} else if a.nums, err = values(node); err != nil {
			return nil, fmt.Errorf("methods.%s.%s (line %d): %w", method, key, node.Line, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func (c *Config) settings(method string) ([]setting, error) {
	axes, err := c.axes(method)
	if err != nil {
		return nil, err
	}
	out := []setting{{params: map[string]float64{}}}
	for _, a := range axes {
		name := a.name
		if a.option {
			allowed := optionKeys[name]
			for _, v := range a.strs {
				if !slices.Contains(allowed, v) {
					return nil, fmt.Errorf("methods.%s.%s: %q is not one of %s", method, a.key, v, strings.Join(allowed, ", "))
				}
			}
			if name == "optimizer" && method != "dpsgd" {
				return nil, fmt.Errorf("methods.%s.optimizer: only dpsgd has an optimizer", method)
			}
			if name == "distance" && !strings.Contains(method, "ppl") && method != "protomean" {
				return nil, fmt.Errorf("methods.%s.distance: only the prototype methods have a distance", method)
			}
			var next []setting
			for _, s := range out {
				for _, v := range a.strs {
					t := s.clone()
					if name == "optimizer" {
						t.optimizer = v
					} else {
						t.distance = v
					}
					next = append(next, t)
				}
			}
			out = next
			continue
		}
		// Every value of the axis, before the first job: a grid no job
		// can take (clip: -1, steps: 1e12) once failed every job, exit 0.
		for _, v := range a.nums {
			if err := solvers.CheckParams(method, map[string]float64{name: v}); err != nil {
				return nil, fmt.Errorf("methods.%s: %w", method, err)
			}
		}
		var next []setting
		for _, s := range out {
			for _, v := range a.nums {
				t := s.clone()
				t.params[name] = v
				next = append(next, t)
			}
		}
		out = next
	}
	return out, nil
}

func (s setting) clone() setting {
	t := s
	t.params = map[string]float64{}
	for k, v := range s.params {
		t.params[k] = v
	}
	return t
}

// Jobs expands the configuration: for every dataset, method setting and
// seed, one job per ε (private methods) or one at ε = ∞ (references).
func (c *Config) Jobs() ([]Job, error) {
	var jobs []Job
	for di, d := range c.Datasets {
		files := fileIdentity(d.Train, d.Validation, d.Test, d.Public)
		for _, method := range sortedKeys(c.Methods) {
			m, _ := solvers.Lookup(method)
			sets, err := c.settings(method)
			if err != nil {
				return nil, err
			}
			eps := c.epsilons(m)
			if c.selects(m) {
				if err := selectable(m, sets); err != nil {
					return nil, err
				}
				for _, e := range eps {
					for _, seed := range c.seeds {
						j := Job{Dataset: di, Method: method, Private: true, Epsilon: e, Delta: c.Delta, Seed: seed, candidates: sets}
						j.ID = jobID(j, d, files, c)
						jobs = append(jobs, j)
					}
				}
				continue
			}
			for _, e := range eps {
				for _, s := range sets {
					for _, seed := range c.seeds {
						j := Job{Dataset: di, Method: method, Private: m.Private, Epsilon: e, Delta: c.Delta, Seed: seed,
							Params: s.params, Optimizer: s.optimizer, Distance: s.distance}
						j.ID = jobID(j, d, files, c)
						jobs = append(jobs, j)
					}
				}
			}
		}
	}
	return jobs, nil
}

func jobID(j Job, d Dataset, files string, c *Config) string {
	key, _ := json.Marshal(map[string]any{
		"dataset": d.Name, "files": files, "val": d.valFraction, "val_public": d.ValidationPublic, "split_seed": c.SplitSeed,
		"method": j.Method, "epsilon": strconv.FormatFloat(j.Epsilon, 'g', -1, 64), "delta": j.Delta, "seed": j.Seed,
		"setting": j.Setting(), "noise": c.Noise, "accountant": c.Accountant, "selection": c.Selection,
	})
	h := sha256.Sum256(key)
	return hex.EncodeToString(h[:8])
}

// fileIdentity names files by path, size and modification time.
func fileIdentity(paths ...string) string {
	var parts []string
	for _, p := range paths {
		if objstore.IsRemote(p) {
			if stamp, err := objstore.Stamp(context.Background(), p); err == nil {
				parts = append(parts, p+":"+stamp)
			}
			continue
		}
		if st, err := os.Stat(p); err == nil && p != "" {
			parts = append(parts, fmt.Sprintf("%s:%d:%d", p, st.Size(), st.ModTime().UnixNano()))
		}
	}
	return strings.Join(parts, "|")
}

// selectable refuses private selection over candidates whose runs are not
// ρ-zCDP with a known ρ: Poisson-sampled DP-SGD (batch > 0) is accounted
// by its own RDP curve.
func selectable(m solvers.Method, sets []setting) error {
	for _, s := range sets {
		if s.params["batch"] > 0 {
			return fmt.Errorf("methods.%s: private selection needs full-batch runs (batch: 0); Poisson-sampled DP-SGD is not supported there", m.Name)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// unknownField matches yaml.v3's "field X not found in type T".
var unknownField = regexp.MustCompile(`field (\S+) not found in type \S+`)

// importOptions says how to read the dataset's training file.
func (d Dataset) importOptions() features.ImportOptions {
	return features.ImportOptions{Classes: d.Classes}
}
