package accounting

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ReleaseKind is what a method promises, which decides what its target
// must be (CheckTarget).
type ReleaseKind int

const (
	// Approximate is (ε, δ)-DP: a positive finite ε (or a fixed noise
	// multiplier) and δ ∈ (0, 1).
	Approximate ReleaseKind = iota
	// PureDP is ε-DP (the exponential mechanism): δ is not needed.
	PureDP
	// Reference is a non-private reference method: ε = +Inf.
	Reference
)

// CheckTarget is the one check of a release's target against the kind of
// method that makes it (every command and package calls it, through
// NewRelease or before reading any data): a private method with ε = ∞ is
// refused before a missing δ is mentioned, and a reference needs ε = ∞.
// sigma > 0 is a fixed noise multiplier, for which ε is not a target.
func CheckTarget(method string, kind ReleaseKind, eps, delta, sigma float64) error {
	if kind == Reference {
		if !math.IsInf(eps, 1) {
			return fmt.Errorf("%w: %s is a non-private reference: run it with --epsilon inf", ErrInvalid, method)
		}
		return nil
	}
	if sigma == 0 {
		if math.IsInf(eps, 1) {
			return fmt.Errorf("%w: %s is private and --epsilon inf asks for no privacy: give a finite --epsilon (the non-private references are ls, newton, logreg, protomean)", ErrInvalid, method)
		}
		if err := CheckEpsilon(eps); err != nil {
			return err
		}
	}
	if kind == Approximate {
		return CheckDelta(delta)
	}
	return nil
}

// Charger records what a release costs: package ledger adapts a budget
// ledger to it, a sweep its cost estimate (ChargeFunc).
type Charger interface {
	// Charge records g as the release's cost, or refuses it: then
	// nothing is recorded, and the release draws no noise.
	Charge(g Guarantee) error
	// Settle replaces what Charge recorded with g, the release's exact
	// guarantee, once part of its noise has been drawn under the charge:
	// it is recorded even past a budget (the noise is already out).
	Settle(g Guarantee) error
}

// ChargeFunc is a Charger whose Charge and Settle are the same function.
type ChargeFunc func(Guarantee) error

// Charge calls f.
func (f ChargeFunc) Charge(g Guarantee) error { return f(g) }

// Settle calls f.
func (f ChargeFunc) Settle(g Guarantee) error { return f(g) }

// ErrDryRun is what a Charger returns to stop a release right after its
// calibration, before any noise: the guarantee it saw is the cost.
var ErrDryRun = errors.New("dry run: stopped after calibration")

// ReleaseOptions are what a caller asks of one release's privacy; each
// field's contract is stated beside it. NewRelease checks them once.
type ReleaseOptions struct {
	// Epsilon and Delta are the target: the whole release — every part of
	// it — meets (Epsilon, Delta)-DP. Epsilon = +Inf asks for a
	// non-private reference; Delta is ignored by pure ε-DP methods.
	Epsilon, Delta float64
	// Sigma, when > 0, fixes the noise multiplier instead of calibrating
	// it; the guarantee is then computed for it at Delta.
	Sigma float64
	// Accountant calibrates and reports ("": auto, every accountant that
	// applies, keeping the smallest ε); Conversion is zCDP's.
	Accountant Accountant
	Conversion Conversion
	// Noise is the randomness: nil is SecureNoise. A seeded source makes
	// the release for reproduction only, which its guarantee says.
	Noise Noise
	// Charger records the cost, once per release and before any noise
	// (nil: nothing records it).
	Charger Charger
	// PrivateN, when in (0, 1), stops treating the number of training
	// examples as public: the caller declares the count (PrivateCount) and
	// n̂ takes this share of the target.
	PrivateN float64
	// DryRun asks for the cost only: releases made before the method's are
	// not charged on their own, and the Charger sees the whole guarantee
	// once, at the method's calibration (it returns ErrDryRun to stop).
	DryRun bool
	// Observe, when set, sees the noise added by every release: its name,
	// the standard deviation used, the noise values (tests check the
	// scale with it).
	Observe func(release string, std float64, noise []float64)
	// Released, when set, sees each noisy statistic as it is released: its
	// name, an index (the class for per-class releases), the noise std and
	// the values. The empirical audit builds its statistics from them.
	Released func(release string, index int, std float64, values []float64)
}

// Release owns the privacy of one release — a fit, in the manner of
// Google's dpagg.Count: its target and the one check of it, the
// mechanisms released before the method's own (a noisy count n̂, a
// transform's statistics) and the method's, calibrated together to the
// target; the charge, made once for the whole release before any noise
// is drawn; the noise draws; and the assumptions its guarantee lists.
// The life of one release is told in doc.go.
type Release struct {
	method string
	kind   ReleaseKind
	opt    ReleaseOptions
	// rows is the number of rows a release sums at most: sensitivities
	// grow by the float64 summation's error bound for it (SumSlack).
	rows int
	// prior are the releases made before the method's, in order.
	prior []Mechanism
	// charged: the Charger has recorded this release; planned: what it
	// recorded is the plan (the priors and the method's share), to be
	// settled at the method's calibration.
	charged, planned bool
	// assumed is what the guarantee treats as public, by kind.
	assumed []Assumption
	// count is a private count released first (PrivateCount), or nil.
	count *countState
}

// NewRelease checks a release's target against the method's kind
// (CheckTarget) and returns its owner. A private release without a noise
// source gets SecureNoise.
func NewRelease(method string, kind ReleaseKind, o ReleaseOptions) (*Release, error) {
	if err := CheckTarget(method, kind, o.Epsilon, o.Delta, o.Sigma); err != nil {
		return nil, err
	}
	if o.Accountant == "" {
		o.Accountant = AccountantAuto
	}
	if o.Noise == nil && kind != Reference {
		o.Noise = SecureNoise()
	}
	return &Release{method: method, kind: kind, opt: o}, nil
}

// Method is the name of the method making the release.
func (r *Release) Method() string { return r.method }

// Private reports whether the release is private (not a reference).
func (r *Release) Private() bool { return r.kind != Reference }

// Epsilon and Delta are the target; Sigma the fixed multiplier (0: none).
func (r *Release) Epsilon() float64 { return r.opt.Epsilon }
func (r *Release) Delta() float64   { return r.opt.Delta }
func (r *Release) Sigma() float64   { return r.opt.Sigma }

// Accountant and Conversion are how the release is accounted.
func (r *Release) Accountant() Accountant { return r.opt.Accountant }
func (r *Release) Conversion() Conversion { return r.opt.Conversion }

// Noise is the release's randomness (nil for a reference).
func (r *Release) Noise() Noise { return r.opt.Noise }

// DryRun reports whether only the cost is asked for.
func (r *Release) DryRun() bool { return r.opt.DryRun }

// SetRows sets the number of rows a release sums at most (SumSlack).
func (r *Release) SetRows(n int) { r.rows = n }

// Account composes mechanisms at the release's δ with its accountant.
func (r *Release) Account(mechs []Mechanism) (Guarantee, error) {
	return Account(mechs, r.opt.Delta, r.opt.Accountant, Options{Conversion: r.opt.Conversion})
}

// WholeTarget is z*, the noise multiplier one Gaussian release of
// sensitivity 1 would need for the whole target (or the fixed Sigma): a
// release made before the method's that takes a share s of the budget,
// measured in GDP's μ², has noise multiplier z*/√s.
func (r *Release) WholeTarget() (float64, error) {
	if r.opt.Sigma > 0 {
		return r.opt.Sigma, nil
	}
	z, _, err := Calibrate(r.opt.Epsilon, r.opt.Delta, AccountantGDP, Options{}, GaussianReleases("one release", 1))
	return z, err
}

// Prior adds releases made before the method's (a noisy count, a
// transform's statistics). The first one charges the whole release before
// its noise is drawn, as a plan: these releases and the method's share of
// the target (a Gaussian release calibrated so that the plan meets the
// target exactly); the method's calibration settles it. A release the
// budget refuses returns the Charger's error, and nothing may be drawn.
func (r *Release) Prior(mechs ...Mechanism) error {
	r.prior = append(r.prior, mechs...)
	if r.opt.DryRun || r.opt.Charger == nil {
		return nil
	}
	plan, err := r.plan()
	if err != nil {
		return err
	}
	if r.charged {
		return r.opt.Charger.Settle(plan)
	}
	if err := r.opt.Charger.Charge(plan); err != nil {
		return err
	}
	r.charged, r.planned = true, true
	return nil
}

// plan is the priors with the method's share of the target.
func (r *Release) plan() (Guarantee, error) {
	share := func(z float64) []Mechanism {
		return append(slices.Clone(r.prior), Mechanism{Name: r.method + ": the method's releases (their share of the target, settled when calibrated)", Kind: KindGaussian, Sensitivity: 1, NoiseStd: z, Count: 1})
	}
	if r.opt.Sigma > 0 {
		return r.Account(share(r.opt.Sigma))
	}
	_, g, err := Calibrate(r.opt.Epsilon, r.opt.Delta, r.opt.Accountant, Options{Conversion: r.opt.Conversion}, share)
	return g, err
}

// Calibrate returns the noise multiplier z of the method's releases —
// the fixed Sigma, or the smallest z at which they and the priors meet
// the target — and the whole release's guarantee, which it charges
// before returning (settling the plan, if one was charged). The method
// draws no noise if it fails.
func (r *Release) Calibrate(build func(z float64) []Mechanism) (float64, Guarantee, error) {
	if r.count != nil && !r.count.done {
		if _, err := r.Count(0); err != nil { // n̂ first: the method's calibration includes it
			return 0, Guarantee{}, err
		}
	}
	all := func(z float64) []Mechanism { return append(build(z), r.prior...) }
	var (
		z   = r.opt.Sigma
		g   Guarantee
		err error
	)
	if z > 0 {
		g, err = r.Account(all(z))
	} else {
		z, g, err = Calibrate(r.opt.Epsilon, r.opt.Delta, r.opt.Accountant, Options{Conversion: r.opt.Conversion}, all)
	}
	if err != nil {
		return 0, Guarantee{}, err
	}
	return z, g, r.Charge(g)
}

// Charge records g, the whole release's guarantee, for a method that
// accounts for itself (the exponential mechanisms): once, before any of
// the method's noise (settling a plan charged by Prior).
func (r *Release) Charge(g Guarantee) error {
	if r.opt.Charger == nil {
		return nil
	}
	if r.planned {
		r.planned = false
		return r.opt.Charger.Settle(g)
	}
	if r.charged {
		// A method that calibrates again (another pass over the data)
		// restates the same release: it replaces the entry, never adds one.
		return r.opt.Charger.Settle(g)
	}
	r.charged = true
	return r.opt.Charger.Charge(g)
}

// Priors are the releases made before the method's.
func (r *Release) Priors() []Mechanism { return slices.Clone(r.prior) }

// Gaussian releases values in place with Gaussian noise of nominal std
// for a release of L2 sensitivity sens (AddGaussian: on a lattice, exactly
// sampled, both grown by the summation slack of the release's rows),
// shows the noise to Observe, and returns the std used.
func (r *Release) Gaussian(name string, values []float64, std, sens float64) float64 {
	return r.draw(name, values, std, func() float64 {
		f := SumSlack(r.rows)
		return AddGaussian(r.opt.Noise, values, std*f, sens*f)
	})
}

// Symmetric releases the symmetric d×d matrix a in place with symmetric
// Gaussian noise (AddSymmetricGaussian: σ on the diagonal, σ/√2 off it,
// for a Frobenius sensitivity sens) and returns the diagonal std.
func (r *Release) Symmetric(name string, a []float64, d int, std, sens float64) float64 {
	return r.draw(name, a, std, func() float64 {
		f := SumSlack(r.rows)
		return AddSymmetricGaussian(r.opt.Noise, a, d, std*f, sens*f)
	})
}

// draw runs add (which returns the std used) unless the release has no
// noise or a Quiet source leaves it quiet, and shows Observe the noise it
// added.
func (r *Release) draw(name string, values []float64, std float64, add func() float64) float64 {
	var before []float64
	if r.opt.Observe != nil {
		before = slices.Clone(values)
	}
	used := 0.0
	if q, ok := r.opt.Noise.(Quiet); ok && q.Quiet(name) {
		used = std
	} else if r.opt.Noise != nil && std > 0 {
		used = add()
	}
	if r.opt.Observe != nil {
		noise := make([]float64, len(values))
		for i := range noise {
			noise[i] = values[i] - before[i]
		}
		r.opt.Observe(name, used, noise)
	}
	return used
}

// Report shows a noisy statistic to the Released hook (the audit's).
func (r *Release) Report(name string, index int, std float64, values []float64) {
	if r.opt.Released != nil {
		r.opt.Released(name, index, std, values)
	}
}

// Assume records that the guarantee treats a, too, as public.
func (r *Release) Assume(a Assumption) { r.assumed, _ = addAssumption(r.assumed, a) }

// Finish completes g, the guarantee of this release, in the one place a
// guarantee is stated: the assumptions made (merged by kind), and, for a
// seeded release, that it is for reproduction only.
func (r *Release) Finish(g *Guarantee) {
	for _, a := range r.assumed {
		g.Assume(a)
	}
	if r.opt.Noise != nil && r.opt.Noise.Seeded() {
		g.MarkSeeded()
	}
}

// countState is a count released before the method's releases (n̂).
type countState struct {
	name   string
	total  int64
	share  float64
	done   bool
	value  float64
	report string
}

// PrivateCount declares that the number of examples total is private:
// the first Count (or the method's calibration, whichever comes first)
// releases n̂ = total + N(0, σₙ²) (sensitivity 1) with σₙ = z*/√share —
// z* the multiplier one Gaussian release would need for the whole target
// (WholeTarget), so that n̂ takes about that share of μ² — as a prior,
// charged before it is drawn; the method then uses n̂ wherever it used n,
// and is calibrated so that both together meet the target. report names
// the release for the Released hook.
func (r *Release) PrivateCount(name, report string, total int64, share float64) error {
	if err := CheckFraction("the share of the budget for n̂", share); err != nil {
		return err
	}
	r.count = &countState{name: name, report: report, total: total, share: share}
	return nil
}

// Count returns total when the count is public (no PrivateCount), else
// the noisy n̂, released on the first call and the same value afterwards
// (floored at 1).
func (r *Release) Count(total int64) (float64, error) {
	c := r.count
	if c == nil {
		return float64(total), nil
	}
	if c.done {
		return c.value, nil
	}
	zStar, err := r.WholeTarget()
	if err != nil {
		return 0, err
	}
	m := Mechanism{Name: c.name, Kind: KindGaussian, Sensitivity: 1, NoiseStd: zStar / math.Sqrt(c.share), Count: 1}
	if err := r.Prior(m); err != nil {
		return 0, err
	}
	v := []float64{float64(c.total)}
	std := m.NoiseStd
	if r.opt.Noise != nil {
		std = AddGaussian(r.opt.Noise, v, m.NoiseStd, 1) // a count: exact, no summation slack
	}
	r.prior[len(r.prior)-1].NoiseStd = math.Max(std, m.NoiseStd)
	r.Report(c.report, 0, math.Max(std, m.NoiseStd), v)
	c.done, c.value = true, math.Max(1, v[0])
	return c.value, nil
}

// Counted returns n̂ and true once a private count has been released.
func (r *Release) Counted() (float64, bool) {
	if r.count == nil || !r.count.done {
		return 0, false
	}
	return r.count.value, true
}
