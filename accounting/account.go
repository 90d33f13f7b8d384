package accounting

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Accountant names a way of composing mechanisms into one (ε, δ) guarantee.
type Accountant string

const (
	// AccountantAuto computes every accountant that applies to the
	// mechanisms and keeps the smallest ε; all of them are valid upper
	// bounds, so the smallest one is too.
	AccountantAuto Accountant = "auto"
	// AccountantGDP composes full-batch Gaussian releases exactly:
	// μ = sqrt(Σ μᵢ²), then the exact μ-GDP curve (Dong, Roth & Su 2022).
	AccountantGDP Accountant = "gdp"
	// AccountantZCDP adds zCDP parameters (Gaussian: μ²/2; pure ε: ε²/2;
	// exponential mechanism: ε²/8) and converts with ConversionCKS (or
	// ConversionSimple, for comparison with the papers).
	AccountantZCDP Accountant = "zcdp"
	// AccountantRDP adds Rényi-DP curves over DefaultOrders (Poisson-
	// subsampled Gaussian by Mironov, Talwar & Zhang 2019) and converts with
	// the bound of Balle et al. 2020.
	AccountantRDP Accountant = "rdp"
	// AccountantPure adds the ε of pure-DP mechanisms (basic composition).
	AccountantPure Accountant = "pure"
	// AccountantNone marks a release without privacy.
	AccountantNone Accountant = "none"
)

// Accountants lists the names ParseAccountant accepts, for help texts.
func Accountants() []string {
	return []string{string(AccountantAuto), string(AccountantGDP), string(AccountantZCDP), string(AccountantRDP), string(AccountantPure)}
}

// ParseAccountant reads an accountant name as the command line spells it.
func ParseAccountant(s string) (Accountant, error) {
	switch a := Accountant(strings.ToLower(strings.TrimSpace(s))); a {
	case AccountantAuto, AccountantGDP, AccountantZCDP, AccountantRDP, AccountantPure:
		return a, nil
	case "":
		return AccountantAuto, nil
	}
	return "", fmt.Errorf("%w: unknown accountant %q (want %s)", ErrInvalid, s, strings.Join(Accountants(), ", "))
}

// Options tunes Account. The zero value means: CKS conversion for zCDP,
// DefaultOrders for RDP, add/remove adjacency.
type Options struct {
	Conversion Conversion
	Orders     []float64
	Adjacency  Adjacency
}

func (o Options) orders() []float64 {
	if len(o.Orders) == 0 {
		return DefaultOrders
	}
	return o.Orders
}

// composition is the accountant-specific total of a list of mechanisms: μ for
// GDP, ρ for zCDP, the RDP curve, or the summed ε of pure mechanisms.
type composition struct {
	acc     Accountant
	mu, rho float64
	curve   []float64
	pureEps float64
}

// compose adds up the mechanisms for one accountant (not auto). It fails with
// ErrInvalid where the accountant does not describe a mechanism.
func compose(mechs []Mechanism, acc Accountant, opt Options) (composition, error) {
	c := composition{acc: acc}
	switch acc {
	case AccountantGDP:
		var s float64
		for _, m := range mechs {
			if m.Kind != KindGaussian || m.subsampled() {
				return c, fmt.Errorf("%w: the GDP accountant composes full-batch Gaussian releases only; %q is %s (use rdp or auto)", ErrInvalid, m.Name, describeKind(m))
			}
			mu := m.mu()
			s += float64(m.Count) * mu * mu
		}
		c.mu = math.Sqrt(s)
	case AccountantZCDP:
		for _, m := range mechs {
			switch {
			case m.Kind == KindGaussian && m.subsampled():
				return c, fmt.Errorf("%w: the zCDP accountant does not cover Poisson-subsampled releases (%q); use rdp or auto", ErrInvalid, m.Name)
			case m.Kind == KindRDP:
				return c, fmt.Errorf("%w: %q is known by its RDP curve only; use rdp or auto", ErrInvalid, m.Name)
			case m.Kind == KindGaussian:
				mu := m.mu()
				c.rho += float64(m.Count) * mu * mu / 2
			default:
				c.rho += float64(m.Count) * ZCDPOfPure(m.Epsilon, m.Kind == KindExponential)
			}
		}
	case AccountantRDP:
		curve, err := RDPCurve(mechs, opt.orders())
		if err != nil {
			return c, err
		}
		c.curve = curve
	case AccountantPure:
		for _, m := range mechs {
			if m.Kind == KindGaussian || m.Kind == KindRDP {
				return c, fmt.Errorf("%w: the pure accountant composes ε-DP mechanisms only; %q needs gdp, zcdp or rdp", ErrInvalid, m.Name)
			}
			c.pureEps += float64(m.Count) * m.Epsilon
		}
	default:
		return c, fmt.Errorf("%w: unknown accountant %q", ErrInvalid, acc)
	}
	return c, nil
}

// epsilon converts the composition to ε at δ and fills in the guarantee.
func (c composition) epsilon(delta float64, opt Options, g *Guarantee) error {
	c.describe(opt, g)
	g.Delta = delta
	switch c.acc {
	case AccountantGDP:
		eps, err := GaussianEpsilon(c.mu, delta)
		g.Epsilon = Float(eps)
		return err
	case AccountantZCDP:
		eps, err := ZCDPEpsilon(c.rho, delta, opt.Conversion)
		g.Epsilon = Float(eps)
		return err
	case AccountantRDP:
		eps, order, err := RDPEpsilon(opt.orders(), c.curve, delta)
		g.Epsilon, g.Order = Float(eps), order
		return err
	case AccountantPure:
		if delta != 0 {
			if err := CheckDelta(delta); err != nil {
				return err
			}
		}
		g.Epsilon = Float(c.pureEps)
		return nil
	}
	return fmt.Errorf("%w: unknown accountant %q", ErrInvalid, c.acc)
}

// delta converts the composition to the δ at which it is (ε, δ)-DP and
// fills in the guarantee.
func (c composition) delta(eps float64, opt Options, g *Guarantee) error {
	c.describe(opt, g)
	g.Epsilon = Float(eps)
	switch c.acc {
	case AccountantGDP:
		g.Delta = GaussianDelta(c.mu, eps)
	case AccountantZCDP:
		switch {
		case opt.Conversion != ConversionSimple:
			g.Delta = zcdpDelta(c.rho, eps)
		case eps <= c.rho:
			g.Delta = 1
		default:
			// Solving ε = ρ + 2·sqrt(ρ·log(1/δ)) for δ.
			g.Delta = math.Exp(-(eps - c.rho) * (eps - c.rho) / (4 * c.rho))
		}
	case AccountantRDP:
		d, order, err := RDPDelta(opt.orders(), c.curve, eps)
		g.Delta, g.Order = d, order
		return err
	case AccountantPure:
		if eps < c.pureEps {
			return fmt.Errorf("%w: the pure accountant states δ = 0 at ε ≥ %g only; use zcdp, rdp or auto for smaller ε", ErrInvalid, c.pureEps)
		}
		g.Delta = 0
	default:
		return fmt.Errorf("%w: unknown accountant %q", ErrInvalid, c.acc)
	}
	return nil
}

// describe fills in the accountant's name, its total and its conversion.
func (c composition) describe(opt Options, g *Guarantee) {
	g.Accountant = c.acc
	switch c.acc {
	case AccountantGDP:
		mu := Float(c.mu)
		g.Mu = &mu
		g.Conversion = ConversionGDP
	case AccountantZCDP:
		rho := Float(c.rho)
		g.Rho = &rho
		g.Conversion = opt.Conversion.String()
	case AccountantRDP:
		g.Conversion = "RDP → (ε, δ) of Balle et al. 2020, Thm. 21, minimised over the order grid"
	case AccountantPure:
		g.Conversion = "basic composition of pure ε-DP"
	}
}

// candidates returns the accountants that apply to the mechanisms, for auto.
func candidates(mechs []Mechanism, pureDeltaZero bool) []Accountant {
	gauss, subsampled := false, false
	for _, m := range mechs {
		switch m.Kind {
		case KindGaussian:
			gauss = true
			subsampled = subsampled || m.subsampled()
		case KindRDP:
			return []Accountant{AccountantRDP}
		}
	}
	switch {
	case !gauss && pureDeltaZero:
		return []Accountant{AccountantPure}
	case !gauss:
		return []Accountant{AccountantPure, AccountantZCDP, AccountantRDP}
	case subsampled:
		return []Accountant{AccountantRDP}
	case allGaussian(mechs):
		// The GDP curve is exact for compositions of Gaussian releases; no
		// other accountant can beat it.
		return []Accountant{AccountantGDP}
	}
	return []Accountant{AccountantZCDP, AccountantRDP}
}

// Account composes the mechanisms with the given accountant and returns the
// (ε, δ) guarantee at the given δ. It fails with ErrInvalid where the
// accountant does not apply (for example GDP or zCDP for Poisson-subsampled
// releases, whose composition they do not describe). Auto tries every
// accountant that applies and keeps the smallest ε.
func Account(mechs []Mechanism, delta float64, acc Accountant, opt Options) (Guarantee, error) {
	if err := validateAll(mechs); err != nil {
		return Guarantee{}, err
	}
	pureZero := delta == 0 && allPure(mechs)
	if !pureZero {
		if err := CheckDelta(delta); err != nil {
			return Guarantee{}, err
		}
	}
	return best(mechs, acc, opt, pureZero, func(c composition, g *Guarantee) error { return c.epsilon(delta, opt, g) },
		func(a, b Guarantee) bool { return a.Epsilon < b.Epsilon })
}

// Delta returns the guarantee at the given ε: the smallest δ at which the
// composed mechanisms are (ε, δ)-DP under the accountant (auto: the
// smallest over those that apply).
func Delta(mechs []Mechanism, eps float64, acc Accountant, opt Options) (Guarantee, error) {
	if err := validateAll(mechs); err != nil {
		return Guarantee{}, err
	}
	if math.IsNaN(eps) || eps < 0 {
		return Guarantee{}, fmt.Errorf("%w: ε must be ≥ 0, got %v", ErrInvalid, eps)
	}
	return best(mechs, acc, opt, false, func(c composition, g *Guarantee) error { return c.delta(eps, opt, g) },
		func(a, b Guarantee) bool { return a.Delta < b.Delta })
}

// best runs convert for the accountant (or, for auto, every candidate) and
// keeps the guarantee that less ranks first.
func best(mechs []Mechanism, acc Accountant, opt Options, pureZero bool, convert func(composition, *Guarantee) error, less func(a, b Guarantee) bool) (Guarantee, error) {
	accs := []Accountant{acc}
	if acc == AccountantAuto || acc == "" {
		accs = candidates(mechs, pureZero)
	}
	var bestG Guarantee
	var firstErr error
	found := false
	for _, a := range accs {
		c, err := compose(mechs, a, opt)
		if err == nil {
			g := Guarantee{Adjacency: opt.Adjacency, Mechanisms: append([]Mechanism(nil), mechs...)}
			if g.Adjacency == "" {
				g.Adjacency = AddRemove
			}
			if err = convert(c, &g); err == nil {
				if !found || less(g, bestG) {
					bestG, found = g, true
				}
				continue
			}
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if !found {
		return Guarantee{}, firstErr
	}
	return bestG, nil
}

// RDPCurve returns the composed RDP of the mechanisms at each order.
func RDPCurve(mechs []Mechanism, orders []float64) ([]float64, error) {
	total := make([]float64, len(orders))
	for _, m := range mechs {
		if err := m.validate(); err != nil {
			return nil, err
		}
		var curve []float64
		switch m.Kind {
		case KindGaussian:
			q := m.SamplingRate
			if q == 0 {
				q = 1
			}
			sigma := math.Inf(1)
			if m.Sensitivity > 0 {
				sigma = m.NoiseStd / m.Sensitivity
			}
			var err error
			if curve, err = RDPSubsampledGaussian(q, sigma, orders); err != nil {
				return nil, err
			}
		case KindRDP:
			// RDP(α) does not decrease with α: at an order between the
			// curve's, the next order up bounds it; above the last, nothing
			// does.
			curve = make([]float64, len(orders))
			for i, a := range orders {
				k := sort.SearchFloat64s(m.RDPOrders, a)
				if k == len(m.RDPOrders) {
					curve[i] = math.Inf(1)
				} else {
					curve[i] = m.RDP[k]
				}
			}
		default:
			// ε-DP implies (α, ε)-RDP and (α, α·ρ)-RDP with ρ its zCDP bound.
			rho := ZCDPOfPure(m.Epsilon, m.Kind == KindExponential)
			curve = make([]float64, len(orders))
			for i, a := range orders {
				curve[i] = math.Min(m.Epsilon, a*rho)
			}
		}
		for i := range total {
			total[i] += float64(m.Count) * curve[i]
		}
	}
	return total, nil
}

func validateAll(mechs []Mechanism) error {
	if len(mechs) == 0 {
		return fmt.Errorf("%w: nothing to account: no mechanisms", ErrInvalid)
	}
	for _, m := range mechs {
		if err := m.validate(); err != nil {
			return err
		}
	}
	return nil
}

func allPure(mechs []Mechanism) bool {
	for _, m := range mechs {
		if m.Kind == KindGaussian || m.Kind == KindRDP {
			return false
		}
	}
	return true
}

func allGaussian(mechs []Mechanism) bool {
	for _, m := range mechs {
		if m.Kind != KindGaussian || m.subsampled() {
			return false
		}
	}
	return true
}

func describeKind(m Mechanism) string {
	if m.Kind == KindGaussian && m.subsampled() {
		return fmt.Sprintf("Poisson-subsampled (q = %g)", m.SamplingRate)
	}
	return string(m.Kind)
}
