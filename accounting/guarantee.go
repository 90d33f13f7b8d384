package accounting

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ErrInvalid marks an argument outside the domain of a formula (ε ≤ 0,
// δ ∉ (0,1), q ∉ (0,1], NaN, …). Callers test for it with errors.Is and
// report it as the user's error.
var ErrInvalid = errors.New("invalid privacy parameter")

// Kind is the family of a released mechanism.
type Kind string

const (
	// KindGaussian is the Gaussian mechanism: a query of L2 sensitivity
	// Sensitivity plus N(0, NoiseStd²) noise in every coordinate, over the
	// full data set (SamplingRate 0 or 1) or over a Poisson sample
	// (0 < SamplingRate < 1).
	KindGaussian Kind = "gaussian"
	// KindPure is any ε-DP mechanism (Epsilon set).
	KindPure Kind = "pure"
	// KindExponential is the exponential mechanism (or report-noisy-max with
	// Gumbel noise), which is ε-DP and ε-bounded-range (Epsilon set).
	KindExponential Kind = "exponential"
	// KindRDP is a mechanism known by its Rényi-DP curve alone (RDPOrders,
	// RDP): only the RDP accountant composes it.
	KindRDP Kind = "rdp"
)

// Mechanism is one kind of release that a method makes, Count times in
// sequence. A release that is applied to Parallel disjoint parts of the data
// (one per class, say) is counted once, by parallel composition.
type Mechanism struct {
	// Name says what is released, e.g. "noisy Gram matrix".
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Sensitivity is the L2 sensitivity Δ of the released query under the
	// guarantee's adjacency (Gaussian only).
	Sensitivity float64 `json:"sensitivity,omitempty"`
	// NoiseStd is the standard deviation s of the Gaussian noise added to
	// each coordinate (Gaussian only). The noise multiplier is s/Δ.
	NoiseStd float64 `json:"noise_std,omitempty"`
	// SamplingRate is the Poisson sampling rate q of each release; 0 and 1
	// both mean the full data set.
	SamplingRate float64 `json:"sampling_rate,omitempty"`
	// Epsilon is the pure-DP parameter of a pure or exponential mechanism.
	Epsilon float64 `json:"epsilon,omitempty"`
	// Count is the number of sequential releases (≥ 1).
	Count int `json:"count"`
	// Parallel, when > 1, records that each release is made once on each of
	// this many disjoint parts of the data.
	Parallel int `json:"parallel,omitempty"`
	// RDPOrders and RDP are a KindRDP mechanism's curve: (α, RDP(α))-RDP
	// at each order, orders ascending.
	RDPOrders []float64 `json:"rdp_orders,omitempty"`
	RDP       []float64 `json:"rdp,omitempty"`
}

// NoiseMultiplier returns s/Δ for a Gaussian mechanism.
func (m Mechanism) NoiseMultiplier() float64 { return m.NoiseStd / m.Sensitivity }

// mu returns the GDP parameter Δ/s of one release of a Gaussian mechanism.
func (m Mechanism) mu() float64 {
	if m.Sensitivity == 0 {
		return 0
	}
	return m.Sensitivity / m.NoiseStd
}

func (m Mechanism) subsampled() bool { return m.SamplingRate > 0 && m.SamplingRate < 1 }

func (m Mechanism) validate() error {
	if m.Count < 1 {
		return fmt.Errorf("%w: mechanism %q: count must be ≥ 1, got %d", ErrInvalid, m.Name, m.Count)
	}
	switch m.Kind {
	case KindGaussian:
		if math.IsNaN(m.Sensitivity) || m.Sensitivity < 0 || math.IsInf(m.Sensitivity, 0) {
			return fmt.Errorf("%w: mechanism %q: sensitivity must be finite and ≥ 0, got %v", ErrInvalid, m.Name, m.Sensitivity)
		}
		if math.IsNaN(m.NoiseStd) || m.NoiseStd < 0 {
			return fmt.Errorf("%w: mechanism %q: noise standard deviation must be ≥ 0, got %v", ErrInvalid, m.Name, m.NoiseStd)
		}
		if math.IsNaN(m.SamplingRate) || m.SamplingRate < 0 || m.SamplingRate > 1 {
			return fmt.Errorf("%w: mechanism %q: sampling rate must be in (0, 1], got %v", ErrInvalid, m.Name, m.SamplingRate)
		}
	case KindPure, KindExponential:
		if math.IsNaN(m.Epsilon) || m.Epsilon < 0 {
			return fmt.Errorf("%w: mechanism %q: ε must be ≥ 0, got %v", ErrInvalid, m.Name, m.Epsilon)
		}
	case KindRDP:
		if len(m.RDPOrders) == 0 || len(m.RDPOrders) != len(m.RDP) {
			return fmt.Errorf("%w: mechanism %q: an RDP curve needs as many values as orders", ErrInvalid, m.Name)
		}
		for i, a := range m.RDPOrders {
			if !(a > 1) || (i > 0 && a <= m.RDPOrders[i-1]) || math.IsNaN(m.RDP[i]) || m.RDP[i] < 0 {
				return fmt.Errorf("%w: mechanism %q: RDP orders must ascend above 1 with values ≥ 0", ErrInvalid, m.Name)
			}
		}
	default:
		return fmt.Errorf("%w: mechanism %q: unknown kind %q", ErrInvalid, m.Name, m.Kind)
	}
	return nil
}

// Adjacency is the neighbouring relation a guarantee is stated for.
type Adjacency string

const (
	// AddRemove: neighbouring data sets differ by adding or removing one
	// example. The subsampled-Gaussian analysis assumes it.
	AddRemove Adjacency = "add-remove"
	// Replace: neighbouring data sets differ by replacing one example.
	Replace Adjacency = "replace"
)

// Float is a float64 that marshals ±Inf and NaN to JSON as the strings
// "inf", "-inf" and "nan" (JSON has no literal for them), and reads them back.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsInf(v, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-inf"`), nil
	case math.IsNaN(v):
		return []byte(`"nan"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("not a number: %q", s)
		}
		*f = Float(v)
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = Float(v)
	return nil
}

// Guarantee is the privacy statement of a release: what was released, how it
// was accounted, and the resulting (ε, δ). Every solver returns one and every
// classifier file stores it.
type Guarantee struct {
	Epsilon Float   `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Rho is the total zCDP parameter, where the accountant is zCDP.
	Rho *Float `json:"rho,omitempty"`
	// Mu is the total GDP parameter, where the accountant is GDP.
	Mu *Float `json:"mu,omitempty"`
	// Order is the optimal Rényi order, where the accountant is RDP.
	Order      float64    `json:"rdp_order,omitempty"`
	Accountant Accountant `json:"accountant"`
	// Conversion says how the accountant's quantity became (ε, δ).
	Conversion string      `json:"conversion"`
	Adjacency  Adjacency   `json:"adjacency"`
	Mechanisms []Mechanism `json:"mechanisms,omitempty"`
	// Public lists what the guarantee treats as public (not protected), for
	// example "class counts" or "the public feature file".
	Public []string `json:"public,omitempty"`
	// Seeded is true when the noise came from a user-seeded generator: such
	// a release is for reproduction only and protects nothing against anyone
	// who knows the seed.
	Seeded bool   `json:"seeded"`
	Note   string `json:"note,omitempty"`
	// Unit, when the training rows are several views of each private
	// example (augmentation multiplicity, DP-Mix), says so: the privacy
	// unit is still the example, whose rows the method averaged before
	// clipping; the form of the guarantee is unchanged.
	Unit string `json:"unit,omitempty"`
	// assumed are the typed assumptions behind Public (Assume).
	assumed []Assumption
}

// SeededNote is the warning a seeded release carries.
const SeededNote = "seeded: for reproduction only; the noise is predictable from the seed, so this release is not private"

// NonPrivate returns the statement of a release without privacy (ε = ∞).
func NonPrivate(note string) Guarantee {
	return Guarantee{Epsilon: Float(math.Inf(1)), Accountant: AccountantNone, Conversion: "none", Note: note}
}

// String renders the guarantee as one line for people.
func (g Guarantee) String() string {
	if math.IsInf(float64(g.Epsilon), 1) {
		return "not private (ε = ∞)"
	}
	s := fmt.Sprintf("(ε = %s, δ = %g)-DP [%s, %s adjacency", FormatUp(float64(g.Epsilon)), g.Delta, g.Accountant, g.Adjacency)
	switch {
	case g.Mu != nil:
		s += ", μ = " + FormatUp(float64(*g.Mu))
	case g.Rho != nil:
		s += ", ρ = " + FormatUp(float64(*g.Rho))
	case g.Order != 0:
		s += fmt.Sprintf(", optimal order %g", g.Order)
	}
	s += "]"
	if g.Unit != "" {
		s += "; " + g.Unit
	}
	if g.Seeded {
		s += " — " + SeededNote
	}
	return s
}

// FormatUp is the one rule for every printed privacy figure — ε, μ, ρ
// and noise multipliers, in every command: 6 significant digits, rounded
// up, so that a printed ε, μ or ρ is never below the loss, and a printed
// noise multiplier still reaches the guarantee it was calibrated for
// (0, ±Inf and NaN print exactly).
func FormatUp(x float64) string {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strconv.FormatFloat(RoundUp(x, 6), 'g', 6, 64)
}

// FormatRemaining prints what is left of a budget with 6 significant
// digits, rounded down, so that the printed number is never above it.
func FormatRemaining(eps float64) string {
	if eps <= 0 || math.IsInf(eps, 0) || math.IsNaN(eps) {
		return strconv.FormatFloat(math.Max(eps, 0), 'g', -1, 64)
	}
	return strconv.FormatFloat(RoundDown(eps, 6), 'g', 6, 64)
}

// RoundDown rounds x > 0 down to the given number of significant digits.
func RoundDown(x float64, digits int) float64 { return roundSig(x, digits, -1) }

// RoundUp rounds x > 0 up to the given number of significant digits.
func RoundUp(x float64, digits int) float64 { return roundSig(x, digits, 1) }

// roundSig rounds x > 0 to digits significant digits toward +∞ (dir 1) or
// −∞ (dir −1), never past x the other way despite the float product.
func roundSig(x float64, digits int, dir float64) float64 {
	if x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	exp := math.Floor(math.Log10(x)) - float64(digits-1)
	scale := math.Pow(10, exp)
	round := math.Ceil
	if dir < 0 {
		round = math.Floor
	}
	r := round(x/scale) * scale
	for (r-x)*dir < 0 {
		r = math.Nextafter(r, math.Inf(int(dir)))
	}
	return r
}
