package cli

import (
	"fmt"
	"github.com/dpfeat/dpfeat/accounting"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/audit"
	"github.com/dpfeat/dpfeat/solvers"
	fitting "github.com/dpfeat/dpfeat/train"
)

func auditCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "audit",
		Usage: "an empirical lower bound on a method's privacy loss, from its real code path, against what the accountant claims",
		UsageText: "dpfeat audit --method M --epsilon E --delta D [--runs N] [--param name=value …] [--json]\n\n" +
			"Runs the method N times on a small data set and N times on it plus one canary, with fresh secure\n" +
			"noise, and turns how well a fixed statistic tells them apart into Clopper–Pearson bounds on the error\n" +
			"rates, then into lower bounds μ_LB (Gaussian DP) and ε_LB(δ) — for Poisson-sampled dpsgd (--param\n" +
			"batch=B) also a Rényi bound against its RDP curve. Exit status 1 when a bound exceeds the\n" +
			"claim. Audited: " + strings.Join(audit.Audited, ", ") + ". Audit at a large ε, where the test has power.\n\n" +
			"Example:\n   dpfeat audit --method dpls --epsilon 8 --delta 1e-5 --runs 1000",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "method", Usage: "the method to audit (required)"},
			&ucli.Float64Flag{Name: "epsilon", Usage: "ε the method is calibrated to (required)"},
			&ucli.Float64Flag{Name: "delta", Value: 1e-5, Usage: "δ"},
			&ucli.IntFlag{Name: "runs", Value: 1000, Usage: "runs per side (half choose the threshold, half count errors)"},
			&ucli.Float64Flag{Name: "alpha", Value: 0.05, Usage: "probability that a correct mechanism fails the audit"},
			&ucli.StringSliceFlag{Name: "param", Usage: "a hyperparameter as name=value (repeatable)"},
			&ucli.StringFlag{Name: "transform", Usage: "audit the private feature transform of this kind (center, standardize, pca, whiten) learned before --method, against its own share of the claim"},
			&ucli.IntFlag{Name: "transform-subspace", Usage: "with --transform whiten: audit the whitening within the top R directions of a public basis (fit's --transform-basis-subspace); the audit makes the basis, spread most along the canary's coordinate"},
			&ucli.Float64Flag{Name: "canary-norm", Value: 1, Usage: "norm of the canary row, as data reaches a method under --no-normalize (dpplpublic, dpplpublick)"},
			&ucli.IntFlag{Name: "views", Value: 1, Usage: "the canary as one example of K rows (its augmented views and mixes, as extract --views writes them): the method must average them into one example's contribution"},
			&ucli.IntFlag{Name: "mix-diff", Usage: "add M mixups with public images to the canary's example: soft-labelled rows, as extract --mix-diff writes them (not for dpplpublic, dpplpublick, which refuse soft labels)"},
			&ucli.StringFlag{Name: "neighbours", Usage: "D.arrow,D2.arrow: audit on two training files instead of a canary — the extractions of two sources that differ by one image, say (dpls, dpplmean)"},
			jsonFlag(),
		},
		Action: auditAction,
	}
}

func auditAction(c *ucli.Context) error {
	method, err := requiredString(c, "method")
	if err != nil {
		return err
	}
	if !c.IsSet("epsilon") || accounting.CheckEpsilon(c.Float64("epsilon")) != nil {
		return userErrorf("--epsilon must be a positive finite number")
	}
	if a := c.Float64("alpha"); !(a > 0 && a < 1) {
		return userErrorf("--alpha must be in (0, 1), got %v", a)
	}
	if k := c.Int("views"); k < 1 {
		return userErrorf("--views must be at least 1, got %d", k)
	}
	if m := c.Int("mix-diff"); m < 0 {
		return userErrorf("--mix-diff must be ≥ 0, got %d", m)
	}
	if r := c.Int("transform-subspace"); r < 0 || (r > 0 && c.String("transform") != solvers.TransformWhiten) {
		return userErrorf("--transform-subspace needs --transform whiten and a number of directions ≥ 1, got %d", r)
	}
	params := map[string]float64{}
	if err := readParams(c, params); err != nil {
		return err
	}
	neighbours, err := auditNeighbours(c)
	if err != nil {
		return err
	}
	prog := newFitProgress(c.App.ErrWriter)
	r, err := audit.Run(c.Context, audit.Config{Method: method, Epsilon: c.Float64("epsilon"), Delta: c.Float64("delta"),
		Runs: c.Int("runs"), Alpha: c.Float64("alpha"), Params: params, CanaryNorm: c.Float64("canary-norm"),
		Transform: c.String("transform"), Subspace: c.Int("transform-subspace"), Views: c.Int("views"), MixDiff: c.Int("mix-diff"), Neighbours: neighbours,
		Progress: func(done, total int) { prog.line("audit %s: %d of %d runs on D and D′", method, done, total) }})
	prog.done()
	if err != nil {
		return userErrorf("audit %s: %v", method, err)
	}
	if c.Bool("json") {
		if err := writeJSON(c.App.Writer, r); err != nil {
			return err
		}
	} else {
		claim := "–"
		if r.MuClaim != nil {
			claim = fmt.Sprintf("%.4f", *r.MuClaim)
		}
		verdict := "pass"
		if !r.Pass {
			verdict = "FAIL"
		}
		if r.MuCanary != nil {
			claim += fmt.Sprintf("; an exact test of this canary would show %.4f", *r.MuCanary)
		}
		if r.RenyiRatio != nil {
			claim += fmt.Sprintf("; Rényi lower bound / claimed RDP %.3f at order %g", *r.RenyiRatio, r.RenyiOrder)
		}
		if err := printf(c.App.Writer, "%s: %s — μ_LB %.4f (claimed μ %s), ε_LB %.4f (claimed ε %.4f) at δ = %g; %d runs per side; FPR %.3f (≤ %.3f), FNR %.3f (≤ %.3f); statistic: %s\n",
			method, verdict, r.MuLB, claim, r.EpsLB, r.EpsClaim, c.Float64("delta"), r.Runs, r.FPR, r.FPRUpper, r.FNR, r.FNRUpper, r.Statistic); err != nil {
			return err
		}
	}
	if !r.Pass {
		return userErrorf("audit %s: %v", method, audit.ErrFailed)
	}
	return nil
}

// auditNeighbours loads --neighbours D.arrow,D2.arrow (none: zeros).
func auditNeighbours(c *ucli.Context) ([2]*solvers.Data, error) {
	var neighbours [2]*solvers.Data
	n := c.String("neighbours")
	if n == "" {
		return neighbours, nil
	}
	paths := strings.Split(n, ",")
	if len(paths) != 2 {
		return neighbours, userErrorf("--neighbours %s: expected two feature files, D.arrow,D2.arrow", n)
	}
	var classes [2][]string
	for i, p := range paths {
		d, meta, err := fitting.LoadData(strings.TrimSpace(p), false)
		if err != nil {
			return neighbours, userErrorf("--neighbours: %v", err)
		}
		neighbours[i], classes[i] = d, meta.Classes
	}
	if !slices.Equal(classes[0], classes[1]) || neighbours[0].D != neighbours[1].D {
		return neighbours, userErrorf("--neighbours %s: the two files have other classes or dimensions", n)
	}
	return neighbours, nil
}
