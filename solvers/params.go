package solvers

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Param describes one hyperparameter of a method: its name (as --param
// and the sweep grid take it; the command-line flag is the name with
// dashes), its default, and what it does. A default that depends on the
// data or the budget is Derived: Doc says how, and the method computes it
// (Params.GetOr, Params.Derived).
type Param struct {
	Name    string
	Default float64
	Derived bool
	// Rule is what values it takes (nil: any finite number): the user's
	// value is checked before the fit (and a sweep's whole grid before its
	// first job), the declared default by TestParamRules, a derived
	// default when the method computes it. A name has one rule in every
	// method that declares it.
	Rule *Rule
	Doc  string
}

// Hyperparameters several methods share, described once.
var (
	featureClip    = Param{Name: "clip", Rule: Positive, Default: 1, Doc: "L2 clipping norm C of features"}
	lowBiasInit    = Param{Name: "bias_init", Default: -10, Doc: "initial bias"}
	newtonLR       = Param{Name: "lr", Rule: Positive, Default: 1, Doc: "step size η"}
	newtonBiasInit = Param{Name: "bias_init", Default: 0, Doc: "initial bias"}
	lsAlpha        = Param{Name: "alpha", Rule: Positive, Derived: true, Doc: "weight α of the negative-class term (default 1/M: each class weighs its negatives like its positives in total)"}
)

// DefaultText is the default as help texts show it.
func (p Param) DefaultText() string {
	if p.Derived {
		return "derived"
	}
	return strconv.FormatFloat(p.Default, 'g', -1, 64)
}

// ParamNames lists the names of m's hyperparameters, in declaration order.
func (m Method) ParamNames() []string {
	names := make([]string, len(m.Params))
	for i, p := range m.Params {
		names[i] = p.Name
	}
	return names
}

// Param returns m's hyperparameter of that name.
func (m Method) Param(name string) (Param, bool) {
	i := slices.IndexFunc(m.Params, func(p Param) bool { return p.Name == name })
	if i < 0 {
		return Param{}, false
	}
	return m.Params[i], true
}

// Setting is the value method m uses for a hyperparameter given the
// user's settings: the user's, else the declared default. ok is false for
// a derived default (the method computes it from the data) and for a name
// m does not have. The audit reads its canaries' clipping norms here, so a
// changed default cannot silently weaken it.
func Setting(method, name string, set map[string]float64) (v float64, ok bool) {
	m, err := Lookup(method)
	if err != nil {
		return 0, false
	}
	p, found := m.Param(name)
	if !found {
		return 0, false
	}
	if v, given := set[name]; given {
		return v, true
	}
	return p.Default, !p.Derived
}

// Rule is what values a hyperparameter takes.
type Rule struct {
	What string
	OK   func(float64) bool
}

// The rules hyperparameters declare (Param.Rule).
var (
	Positive = &Rule{"a positive number", func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }}
	Whole    = &Rule{"a positive whole number of at most 10⁷", func(v float64) bool { return v >= 1 && v == math.Trunc(v) && v <= 1e7 }}
	finite   = &Rule{"a finite number", func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }}
	// Fraction01 is [0, 1) (a momentum).
	Fraction01 = &Rule{"in [0, 1)", func(v float64) bool { return v >= 0 && v < 1 }}
	// NonNegative is ≥ 0 (a weight decay).
	NonNegative = &Rule{"≥ 0", func(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }}
	// BatchRule is 0 (full batch) or a whole batch size.
	BatchRule = &Rule{"0 (full batch) or a whole number of at most 10⁹", func(v float64) bool { return v >= 0 && v == math.Trunc(v) && v <= 1e9 }}
)

// rule is p's rule (finite when it declares none).
func (p Param) rule() *Rule {
	if p.Rule == nil {
		return finite
	}
	return p.Rule
}

// check applies p's rule to v.
func (p Param) check(v float64) error {
	if r := p.rule(); !r.OK(v) {
		return fmt.Errorf("hyperparameter %s must be %s, got %v", p.Name, r.What, v)
	}
	return nil
}

// sortedNames lists a parameter map's names in order (for a stable first
// error).
func sortedNames(params map[string]float64) []string {
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// CheckParams refuses hyperparameter names that the method does not read,
// and values their rule does not allow (Param.Rule).
func CheckParams(name string, params map[string]float64) error {
	m, err := Lookup(name)
	if err != nil {
		return err
	}
	var bad []string
	for k := range params {
		if _, ok := m.Param(k); !ok {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		for _, k := range sortedNames(params) {
			if d, _ := m.Param(k); d.check(params[k]) != nil {
				err := d.check(params[k])
				return fmt.Errorf("%s: %w", m.Name, err)
			}
		}
		return nil
	}
	sort.Strings(bad)
	known := "none"
	if len(m.Params) > 0 {
		known = strings.Join(m.ParamNames(), ", ")
	}
	return fmt.Errorf("%s has no hyperparameter %s (it has: %s)", m.Name, strings.Join(bad, ", "), known)
}

// Params reads a method's hyperparameters — the user's value, else the
// default its description (Method.Params) declares — recording which were
// defaulted. Reading a name the method does not declare, or a derived one
// without its computed default (or a declared one with a second default),
// is a programmer error and panics.
type Params struct {
	method    Method
	set       map[string]float64
	used      map[string]any
	read      map[string]bool
	defaulted []string
}

// NewParams reads o.Params for the method being fitted (set by Fit and
// FitRows).
func NewParams(o *Options) *Params {
	m, err := Lookup(o.method)
	if err != nil {
		panic(fmt.Sprintf("solvers.NewParams: %v (options not prepared by Fit or FitRows)", err))
	}
	return &Params{method: m, set: o.Params, used: map[string]any{}, read: map[string]bool{}}
}

// declared returns the description of name, checking that its default is
// declared (derived false) or computed by the method (derived true).
func (p *Params) declared(name string, derived bool) Param {
	d, ok := p.method.Param(name)
	switch {
	case !ok:
		panic(fmt.Sprintf("solvers: %s reads hyperparameter %q but does not declare it in Method.Params", p.method.Name, name))
	case d.Derived != derived && derived:
		panic(fmt.Sprintf("solvers: %s computes a default for %q, whose default is declared (%v)", p.method.Name, name, d.Default))
	case d.Derived != derived:
		panic(fmt.Sprintf("solvers: %s reads %q without computing its derived default", p.method.Name, name))
	}
	return d
}

// Get returns the user's value for name, or its declared default.
func (p *Params) Get(name string) float64 {
	return p.value(name, p.declared(name, false).Default)
}

// GetOr returns the user's value for a derived hyperparameter, or def, the
// default the method computed.
func (p *Params) GetOr(name string, def float64) float64 {
	p.declared(name, true)
	return p.value(name, def)
}

func (p *Params) value(name string, def float64) float64 {
	p.read[name] = true
	if v, ok := p.set[name]; ok {
		p.used[name] = v
		return v
	}
	p.used[name] = def
	p.defaulted = append(p.defaulted, name)
	return def
}

// Int is Get for a whole-number hyperparameter (its rule is Whole or
// BatchRule), recorded as an int.
func (p *Params) Int(name string) int {
	v := int(p.Get(name))
	p.used[name] = v
	return v
}

// Derived is GetOr that checks the default the method computed against
// the hyperparameter's rule (the user's value was checked before the
// fit).
func (p *Params) Derived(name string, def float64) (float64, error) {
	v := p.GetOr(name, def)
	if err := p.declared(name, true).check(v); err != nil {
		return 0, fmt.Errorf("%s: the default computed from the data: %w", p.method.Name, err)
	}
	return v, nil
}

// DerivedInt is Derived for a whole number.
func (p *Params) DerivedInt(name string, def int) (int, error) {
	v, err := p.Derived(name, float64(def))
	p.used[name] = int(v)
	return int(v), err
}

// Record notes a setting that is not a user-settable hyperparameter (the
// optimizer, derived quantities) in the result's hyperparameters.
func (p *Params) Record(name string, v any) { p.used[name] = v }

// Finish stores the settings in the result.
func (p *Params) Finish(r *Result) {
	r.Hyperparameters = p.used
	for k := range p.read {
		r.read = append(r.read, k)
	}
	sort.Strings(p.defaulted)
	r.Defaulted = p.defaulted
}
