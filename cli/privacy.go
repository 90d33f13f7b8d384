package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/accounting"
)

func privacyCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "privacy",
		Usage: "the privacy accountant as a calculator: ε for a noise level, the noise for an ε, δ for an ε",
		Description: "The same accountant that calibrates and reports every dpfeat release.\n\n" +
			"A release is described by a noise multiplier σ (noise standard deviation divided by the\n" +
			"query's L2 sensitivity), a number of steps or releases, and a Poisson sampling rate q\n" +
			"(1 = full batch, the setting of DP-LS, DP-FC, DP-Newton). Alternatively give a total\n" +
			"zCDP ρ (--rho) or GDP μ (--mu).\n\n" +
			"Accountants: gdp (exact for full-batch Gaussian releases), zcdp (conversion cks or\n" +
			"simple), rdp (Poisson-subsampled Gaussian, Mironov–Talwar–Zhang), auto (the tightest\n" +
			"that applies; the default).\n\n" +
			"Examples:\n" +
			"   dpfeat privacy epsilon --sigma 1.1 --steps 10000 --sampling-rate 0.01 --delta 1e-5\n" +
			"   dpfeat privacy sigma --epsilon 1 --delta 1e-5 --releases 3\n" +
			"   dpfeat privacy epsilon --rho 0.5 --delta 1e-7\n" +
			"   dpfeat privacy delta --epsilon 1 --sigma 5 --releases 3",
		Subcommands: []*ucli.Command{
			{
				Name:      "epsilon",
				Usage:     "ε at a given δ for a noise multiplier, ρ or μ",
				UsageText: "dpfeat privacy epsilon (--sigma S [--steps T] [--sampling-rate Q] | --rho R | --mu M) --delta D\n\nExample:\n   dpfeat privacy epsilon --sigma 1.1 --steps 10000 --sampling-rate 0.01 --delta 1e-5",
				Flags:     append(sourceFlags(), deltaFlag()),
				Action:    privacyEpsilon,
			},
			{
				Name:      "sigma",
				Usage:     "the smallest noise multiplier that reaches (ε, δ)",
				UsageText: "dpfeat privacy sigma --epsilon E --delta D [--releases K | --steps T --sampling-rate Q]\n\nExample:\n   dpfeat privacy sigma --epsilon 1 --delta 1e-5 --releases 3",
				Flags:     append(releaseFlags(), epsilonFlag(), deltaFlag()),
				Action:    privacySigma,
			},
			{
				Name:      "delta",
				Usage:     "δ at a given ε for a noise multiplier, ρ or μ",
				UsageText: "dpfeat privacy delta (--sigma S [--steps T] [--sampling-rate Q] | --rho R | --mu M) --epsilon E\n\nExample:\n   dpfeat privacy delta --epsilon 1 --sigma 5 --releases 3",
				Flags:     append(sourceFlags(), epsilonFlag()),
				Action:    privacyDelta,
			},
		},
	}
}

func epsilonFlag() ucli.Flag {
	return &ucli.Float64Flag{Name: "epsilon", Usage: "ε, a positive number (required)", DefaultText: "none"}
}

func deltaFlag() ucli.Flag {
	return &ucli.Float64Flag{Name: "delta", Usage: "δ, in (0, 1); usually well below 1/n (required)", DefaultText: "none"}
}

// releaseFlags describe a sequence of Gaussian releases by noise multiplier.
func releaseFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.IntFlag{Name: "steps", Aliases: []string{"releases"}, Value: 1, Usage: "number of Gaussian releases (full batch) or DP-SGD steps"},
		&ucli.Float64Flag{Name: "sampling-rate", Aliases: []string{"q"}, Value: 1, Usage: "Poisson sampling rate q in (0, 1]; 1 means full batch"},
		&ucli.StringFlag{Name: "accountant", Value: string(accounting.AccountantAuto), Usage: "auto, gdp, zcdp or rdp"},
		&ucli.StringFlag{Name: "conversion", Value: string(accounting.ConversionCKS), Usage: "zCDP → (ε, δ): cks (Canonne–Kamath–Steinke) or simple (ρ + 2√(ρ log 1/δ))"},
		jsonFlag(),
	}
}

// sourceFlags add the alternatives to a noise multiplier: a total ρ or μ.
func sourceFlags() []ucli.Flag {
	return append([]ucli.Flag{
		&ucli.Float64Flag{Name: "sigma", Usage: "noise multiplier σ: noise standard deviation / L2 sensitivity", DefaultText: "none"},
		&ucli.Float64Flag{Name: "rho", Usage: "total zCDP ρ, instead of --sigma", DefaultText: "none"},
		&ucli.Float64Flag{Name: "mu", Usage: "total GDP μ, instead of --sigma", DefaultText: "none"},
	}, releaseFlags()...)
}

// privacyResult is the --json output of the privacy commands: the inputs and
// the guarantee, flat.
type privacyResult struct {
	Query           string   `json:"query"`
	NoiseMultiplier *float64 `json:"noise_multiplier,omitempty"`
	Steps           int      `json:"steps,omitempty"`
	SamplingRate    float64  `json:"sampling_rate,omitempty"`
	accounting.Guarantee
}

// releaseSpec is a parsed description of the releases.
type releaseSpec struct {
	steps int
	q     float64
	acc   accounting.Accountant
	opt   accounting.Options
}

func parseRelease(c *ucli.Context) (releaseSpec, error) {
	var r releaseSpec
	r.steps = c.Int("steps")
	if r.steps < 1 {
		return r, userErrorf("--steps must be at least 1, got %d", r.steps)
	}
	r.q = c.Float64("sampling-rate")
	if !(r.q > 0 && r.q <= 1) {
		return r, userErrorf("--sampling-rate must be in (0, 1], got %v", r.q)
	}
	acc, err := accounting.ParseAccountant(c.String("accountant"))
	if err != nil {
		return r, userErrorf("--accountant: %v", stripInvalid(err))
	}
	if acc == accounting.AccountantPure {
		return r, userErrorf("--accountant pure composes pure ε-DP mechanisms; Gaussian noise needs auto, gdp, zcdp or rdp")
	}
	r.acc = acc
	switch conv := accounting.Conversion(strings.ToLower(c.String("conversion"))); conv {
	case accounting.ConversionCKS, accounting.ConversionSimple:
		r.opt.Conversion = conv
	default:
		return r, userErrorf("--conversion must be cks or simple, got %q", c.String("conversion"))
	}
	return r, nil
}

func (r releaseSpec) build(z float64) []accounting.Mechanism {
	if r.q < 1 {
		return accounting.SampledGaussianSteps("Poisson-sampled Gaussian step", r.q, r.steps)(z)
	}
	return accounting.GaussianReleases("full-batch Gaussian release", r.steps)(z)
}

func positiveFlag(c *ucli.Context, name string) (float64, error) {
	if !c.IsSet(name) {
		return 0, userErrorf("--%s is required", name)
	}
	v := c.Float64(name)
	if !(v > 0) || math.IsInf(v, 0) {
		return 0, userErrorf("--%s must be a positive finite number, got %v", name, v)
	}
	return v, nil
}

func deltaArg(c *ucli.Context) (float64, error) {
	if !c.IsSet("delta") {
		return 0, userErrorf("--delta is required")
	}
	d := c.Float64("delta")
	if err := accounting.CheckDelta(d); err != nil {
		return 0, userErrorf("--delta: %v", err)
	}
	return d, nil
}

// source says which of --sigma, --rho and --mu was given (exactly one).
func source(c *ucli.Context) (string, error) {
	var given []string
	for _, n := range []string{"sigma", "rho", "mu"} {
		if c.IsSet(n) {
			given = append(given, n)
		}
	}
	if len(given) != 1 {
		return "", userErrorf("give exactly one of --sigma, --rho or --mu (got %d)", len(given))
	}
	if given[0] != "sigma" {
		for _, n := range []string{"steps", "sampling-rate"} {
			if c.IsSet(n) {
				return "", userErrorf("--%s goes with --sigma; --%s is already the total", n, given[0])
			}
		}
	}
	return given[0], nil
}

// mechanisms turns the given source into mechanisms and the accountant to
// use: --sigma describes the releases; a total ρ or μ is stood in for by one
// Gaussian release with μ = sqrt(2ρ) or μ, which is exactly ρ-zCDP or
// μ-GDP, accounted by zCDP or GDP.
func mechanisms(src string, v float64, r releaseSpec) ([]accounting.Mechanism, accounting.Accountant, error) {
	if src == "sigma" {
		return r.build(v), r.acc, nil
	}
	m, want := accounting.StandIn(src, v)
	if r.acc != accounting.AccountantAuto && r.acc != want {
		return nil, "", userErrorf("--%s is a %s quantity; --accountant %s does not apply", src, want, r.acc)
	}
	return []accounting.Mechanism{m}, want, nil
}

// result wraps a guarantee with the inputs it came from.
func result(query, src string, v float64, r releaseSpec, g accounting.Guarantee) privacyResult {
	res := privacyResult{Query: query, Guarantee: g}
	if src == "sigma" {
		res.NoiseMultiplier, res.Steps, res.SamplingRate = &v, r.steps, r.q
	} else {
		res.Mechanisms = nil // a stand-in, not what the user released
	}
	return res
}

// released parses the release description shared by epsilon and delta:
// --sigma with --steps/--sampling-rate, or a total --rho or --mu.
type released struct {
	src   string
	v     float64
	r     releaseSpec
	mechs []accounting.Mechanism
	acc   accounting.Accountant
}

func parseReleased(c *ucli.Context) (released, error) {
	var x released
	var err error
	if x.src, err = source(c); err != nil {
		return x, err
	}
	if x.r, err = parseRelease(c); err != nil {
		return x, err
	}
	if x.v, err = positiveFlag(c, x.src); err != nil {
		return x, err
	}
	x.mechs, x.acc, err = mechanisms(x.src, x.v, x.r)
	return x, err
}

// emit prints a privacy result: JSON, or a headline and how it was
// obtained.
func emit(c *ucli.Context, res privacyResult, headline string) error {
	if c.Bool("json") {
		return writeJSON(c.App.Writer, res)
	}
	if err := printf(c.App.Writer, "%s", headline); err != nil {
		return err
	}
	return describe(c.App.Writer, res)
}

func privacyEpsilon(c *ucli.Context) error {
	x, err := parseReleased(c)
	if err != nil {
		return err
	}
	delta, err := deltaArg(c)
	if err != nil {
		return err
	}
	g, err := accounting.Account(x.mechs, delta, x.acc, x.r.opt)
	if err != nil {
		return accountingError(err)
	}
	res := result("epsilon", x.src, x.v, x.r, g)
	return emit(c, res, fmt.Sprintf("ε = %s at δ = %g\n", accounting.FormatUp(float64(res.Epsilon)), res.Delta))
}

func privacySigma(c *ucli.Context) error {
	r, err := parseRelease(c)
	if err != nil {
		return err
	}
	eps, err := positiveFlag(c, "epsilon")
	if err != nil {
		return err
	}
	delta, err := deltaArg(c)
	if err != nil {
		return err
	}
	z, g, err := accounting.Calibrate(eps, delta, r.acc, r.opt, r.build)
	if err != nil {
		return accountingError(err)
	}
	res := privacyResult{Query: "sigma", NoiseMultiplier: &z, Steps: r.steps, SamplingRate: r.q, Guarantee: g}
	return emit(c, res, fmt.Sprintf("σ = %s (noise standard deviation = σ × L2 sensitivity), the smallest σ with ε ≤ %g at δ = %g\nε = %s at δ = %g\n",
		accounting.FormatUp(z), eps, delta, accounting.FormatUp(float64(g.Epsilon)), g.Delta))
}

func privacyDelta(c *ucli.Context) error {
	x, err := parseReleased(c)
	if err != nil {
		return err
	}
	eps, err := positiveFlag(c, "epsilon")
	if err != nil {
		return err
	}
	g, err := accounting.Delta(x.mechs, eps, x.acc, x.r.opt)
	if err != nil {
		return accountingError(err)
	}
	res := result("delta", x.src, x.v, x.r, g)
	// δ is printed rounded up: never below the computed one.
	return emit(c, res, fmt.Sprintf("δ = %s at ε = %g\n", accounting.FormatUp(res.Delta), eps))
}

// describe prints how a privacy result was obtained, for people.
func describe(w io.Writer, r privacyResult) error {
	acc := string(r.Accountant)
	switch {
	case r.Mu != nil:
		acc += ", μ = " + accounting.FormatUp(float64(*r.Mu))
	case r.Rho != nil:
		acc += ", ρ = " + accounting.FormatUp(float64(*r.Rho))
	case r.Order != 0:
		acc += fmt.Sprintf(", optimal Rényi order %g", r.Order)
	}
	if err := printf(w, "accountant: %s\n", acc); err != nil {
		return err
	}
	if r.Conversion != "" {
		if err := printf(w, "conversion: %s\n", r.Conversion); err != nil {
			return err
		}
	}
	if r.NoiseMultiplier != nil {
		what := fmt.Sprintf("%d full-batch Gaussian release(s)", r.Steps)
		if r.SamplingRate < 1 {
			what = fmt.Sprintf("%d Poisson-sampled Gaussian step(s) at q = %g", r.Steps, r.SamplingRate)
		}
		if err := printf(w, "releases: %s with noise multiplier %s\n", what, accounting.FormatUp(*r.NoiseMultiplier)); err != nil {
			return err
		}
	}
	return printf(w, "adjacency: %s (neighbouring data sets differ by one example added or removed)\n", r.Adjacency)
}

// formatUp prints x with 6 significant digits, rounded up.

// accountingError classifies an error from the accountant: invalid
// parameters are the user's, anything else is internal.
func accountingError(err error) error {
	if errors.Is(err, accounting.ErrInvalid) {
		return userErrorf("%s", stripInvalid(err))
	}
	return internal(err)
}

func stripInvalid(err error) string {
	return strings.TrimPrefix(err.Error(), accounting.ErrInvalid.Error()+": ")
}
