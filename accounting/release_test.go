package accounting

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestCheckTarget(t *testing.T) {
	for _, c := range []struct {
		kind            ReleaseKind
		eps, delta, sig float64
		want            string // "" accepts
	}{
		{Approximate, 1, 1e-5, 0, ""},
		{Approximate, math.Inf(1), 1e-5, 0, "is private"},
		{Approximate, 0, 1e-5, 0, "positive finite"},
		{Approximate, 1, 0, 0, "δ must be in (0, 1)"},
		{Approximate, math.Inf(1), 1e-5, 2, ""}, // a fixed σ replaces ε
		{PureDP, 1, 0, 0, ""},
		{PureDP, -1, 0, 0, "positive finite"},
		{Reference, math.Inf(1), 0, 0, ""},
		{Reference, 1, 0, 0, "non-private reference"},
	} {
		err := CheckTarget("m", c.kind, c.eps, c.delta, c.sig)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c, err, c.want)
		}
	}
}

// recorder is a Charger that can refuse.
type recorder struct {
	charged, settled []Guarantee
	refuse           bool
}

func (r *recorder) Charge(g Guarantee) error {
	if r.refuse {
		return errors.New("over budget")
	}
	r.charged = append(r.charged, g)
	return nil
}
func (r *recorder) Settle(g Guarantee) error { r.settled = append(r.settled, g); return nil }

// TestReleaseChargesOnce: a release with a prior is charged once, as a
// plan that meets the target, before the prior's noise; the method's
// calibration settles it; a refused plan draws nothing.
func TestReleaseChargesOnce(t *testing.T) {
	build := GaussianReleases("method", 3)
	for _, refuse := range []bool{false, true} {
		rec := &recorder{refuse: refuse}
		draws := 0
		rel, err := NewRelease("m", Approximate, ReleaseOptions{Epsilon: 1, Delta: 1e-5, Charger: rec, Noise: countingNoise{SeededNoise(1), &draws}})
		if err != nil {
			t.Fatal(err)
		}
		zs, _ := rel.WholeTarget()
		err = rel.Prior(Mechanism{Name: "prior", Kind: KindGaussian, Sensitivity: 1, NoiseStd: zs / math.Sqrt(0.2), Count: 1})
		if refuse {
			if err == nil || len(rec.charged)+len(rec.settled) != 0 || draws != 0 {
				t.Errorf("refused plan: err %v, %d charges, %d draws", err, len(rec.charged)+len(rec.settled), draws)
			}
			continue
		}
		if err != nil || len(rec.charged) != 1 || float64(rec.charged[0].Epsilon) > 1+1e-9 || float64(rec.charged[0].Epsilon) < 0.99 {
			t.Fatalf("plan: %v %+v", err, rec.charged)
		}
		rel.Gaussian("prior", []float64{0}, zs/math.Sqrt(0.2), 1)
		_, g, err := rel.Calibrate(build)
		if err != nil || len(rec.charged) != 1 || len(rec.settled) != 1 || len(rec.settled[0].Mechanisms) != 2 || float64(g.Epsilon) > 1+1e-9 {
			t.Fatalf("settled: %v, %d charged, %+v", err, len(rec.charged), rec.settled)
		}
		// Calibrating again restates the release: a settlement, no new charge.
		if _, _, err := rel.Calibrate(build); err != nil || len(rec.charged) != 1 || len(rec.settled) != 2 {
			t.Errorf("a second calibration: %v, %d charged, %d settled", err, len(rec.charged), len(rec.settled))
		}
	}
}

// TestAssumptionsMergeByKind: one line per kind, with every use.
func TestAssumptionsMergeByKind(t *testing.T) {
	var g Guarantee
	g.Assume(Assumption{Kind: AssumeN, N: 10, Uses: []string{"divides sums"}})
	g.Assume(Assumption{Kind: AssumeSchema})
	g.Assume(Assumption{Kind: AssumeN, N: 10, Uses: []string{"stored in the classifier"}})
	if len(g.Public) != 2 || g.Public[0] != "the number of training examples (n = 10), divides sums; stored in the classifier" {
		t.Errorf("%q", g.Public)
	}
}

type countingNoise struct {
	Noise
	n *int
}

func (c countingNoise) Uint64() uint64 { *c.n++; return c.Noise.Uint64() }

// quietNoise leaves the releases it names without noise (Quiet).
type quietNoise struct {
	Noise
	names []string
}

func (q quietNoise) Quiet(release string) bool { return slices.Contains(q.names, release) }

// TestQuietReleases: a Quiet source leaves exactly the releases it names
// unchanged, reporting their nominal std; the others get noise.
func TestQuietReleases(t *testing.T) {
	rel, err := NewRelease("m", Approximate, ReleaseOptions{Sigma: 1, Delta: 1e-5, Noise: quietNoise{SeededNoise(1), []string{"mean", "matrix"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		quiet bool
	}{{"mean", true}, {"matrix", true}, {"sums", false}} {
		v := make([]float64, 16)
		var std float64
		if c.name == "matrix" {
			std = rel.Symmetric(c.name, v, 4, 2, 1)
		} else {
			std = rel.Gaussian(c.name, v, 2, 1)
		}
		changed := slices.ContainsFunc(v, func(x float64) bool { return x != 0 })
		if changed == c.quiet || (c.quiet && std != 2) || std < 2 {
			t.Errorf("%s: changed %v, std %v (quiet %v)", c.name, changed, std, c.quiet)
		}
	}
}
