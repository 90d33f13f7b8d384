package finetune

import (
	"fmt"
	"math"

	"github.com/dpfeat/dpfeat/accounting"
)

// DefaultShare is the part of ε that Phase II (the head) gets when the user
// does not say: DP-RandP's strategy (Tang et al. 2024, Sec. 3.3 and
// App. E, Fig. 7) gives all of a small ε to linear probing and a falling
// share as ε grows. dpfeat's curve: 1 up to ε = 0.25, then 0.5/√ε, at
// least 0.1 (0.5 at ε = 1, 0.18 at ε = 8); the constants are dpfeat's.
func DefaultShare(eps float64) float64 {
	if eps <= 0.25 {
		return 1
	}
	return math.Max(0.1, math.Min(1, 0.5/math.Sqrt(eps)))
}

// Plan calibrates the two phases to a total (ε, δ) over n examples:
// Phase II's noise multiplier so that it alone meets (share·ε, δ), then
// Phase III's so that both together meet (ε, δ) — composed by the
// accountant (RDP when a phase is Poisson-sampled, exact GDP when both
// are full-batch). A phase with no steps is skipped; share 1 leaves
// Phase III no budget, so it must have no steps. The returned guarantee is
// the total.
func Plan(eps, delta, share float64, n int, p2, p3 *Phase, acc accounting.Accountant) (accounting.Guarantee, error) {
	if !(share >= 0 && share <= 1) {
		return accounting.Guarantee{}, fmt.Errorf("the Phase II share must be in [0, 1], got %v", share)
	}
	if p2.Steps == 0 && p3.Steps == 0 {
		return accounting.Guarantee{}, fmt.Errorf("both phases have no steps")
	}
	if share == 1 && p3.Steps > 0 || share == 0 && p2.Steps > 0 {
		return accounting.Guarantee{}, fmt.Errorf("a Phase II share of %v leaves a phase with steps but no budget", share)
	}
	opt := accounting.Options{}
	if p2.Steps > 0 {
		target := share * eps
		z, _, err := accounting.Calibrate(target, delta, acc, opt, func(z float64) []accounting.Mechanism {
			q := *p2
			q.Sigma = z
			return q.Mechanisms(n)
		})
		if err != nil {
			return accounting.Guarantee{}, fmt.Errorf("Phase II at ε = %v: %w", target, err)
		}
		p2.Sigma = z
	}
	if p3.Steps == 0 {
		return accounting.Account(p2.Mechanisms(n), delta, acc, opt)
	}
	z, g, err := accounting.Calibrate(eps, delta, acc, opt, func(z float64) []accounting.Mechanism {
		q := *p3
		q.Sigma = z
		return append(p2.Mechanisms(n), q.Mechanisms(n)...)
	})
	if err != nil {
		return accounting.Guarantee{}, fmt.Errorf("Phase III: %w", err)
	}
	p3.Sigma = z
	return g, nil
}

// PlanRelease plans both phases for rel's target (Plan, with rel's
// accountant), records what the guarantee treats as public — n, which
// divides the noisy gradient sums and sets Phase III's sampling rate, and
// the initial parameters — and charges the whole run once through rel,
// before any noise. unit, when the examples have several views, says so.
func PlanRelease(rel *accounting.Release, share float64, n int, p2, p3 *Phase, initial accounting.Assumption, unit string) (accounting.Guarantee, error) {
	g, err := Plan(rel.Epsilon(), rel.Delta(), share, n, p2, p3, rel.Accountant())
	if err != nil {
		return g, err
	}
	if err := rel.Charge(g); err != nil {
		return g, err
	}
	if p3.Steps > 0 {
		g.Unit = unit
	}
	rel.Assume(accounting.Assumption{Kind: accounting.AssumeN, N: n, Uses: []string{"divides the noisy gradient sums, sets Phase III's sampling rate batch/n, and is stored in the output's settings"}})
	rel.Assume(initial)
	rel.Finish(&g)
	return g, nil
}
