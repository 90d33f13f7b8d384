package prototypes

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/solvers"
)

// shifted is blobs with a large common offset (features far from
// centred, as images unlike the encoder's give).
func shifted(n, d, m int, seed uint64) *solvers.Data {
	x := blobs(n, d, m, seed)
	for i := 0; i < x.N; i++ {
		row := x.Row(i)
		row[d-1] += 3
		solvers.Preprocessing{Normalize: true}.Apply(row)
	}
	return x
}

// TestBasisTransformReleasesOnlyTheMean (#41): a pca transform whose
// directions come from public basis rows releases the private mean and
// nothing else, from its share (centring's by default), keeps exactly
// Dims directions, and the guarantee lists the basis as public.
func TestBasisTransformReleasesOnlyTheMean(t *testing.T) {
	d := shifted(500, 12, 3, 1)
	basis := shifted(300, 12, 3, 2)
	res, err := solvers.Fit(context.Background(), "dpplmean", d, solvers.Options{
		Privacy:   accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(1)},
		Transform: solvers.TransformSpec{Kind: solvers.TransformPCA, Dims: 4, Basis: basis, BasisName: "the basis rows B"},
	})
	if err != nil {
		t.Fatal(err)
	}
	all := mechanismNames(res)
	if !strings.Contains(all, "transform: noisy feature sum") || strings.Contains(all, "second-moment") {
		t.Errorf("releases %q: want the mean's and no matrix", all)
	}
	if tr := res.Prep.Transform; tr == nil || tr.Dims != 4 || tr.Kind != solvers.TransformPCA {
		t.Fatalf("transform %+v, want pca with 4 directions", tr)
	}
	if res.Hyperparameters["transform_share"] != solvers.DefaultTransformShare(solvers.TransformCenter) || res.Hyperparameters["transform_basis"] != "the basis rows B" {
		t.Errorf("hyperparameters %v", res.Hyperparameters)
	}
	if assumed := assumedTexts(res); !strings.Contains(assumed, "pca directions), learned from the basis rows B") {
		t.Errorf("the guarantee does not list the basis: %q", assumed)
	}
	if eps := float64(res.Guarantee.Epsilon); eps > 1 || eps < 0.99 {
		t.Errorf("ε = %v, want the target 1", eps)
	}
}

// TestBasisSubspaceWhitensPrivately (#41): a whitening within the basis's
// top directions (Subspace) releases the private mean and the R×R matrix
// within them, from the whitening's share, keeps R directions, and the
// guarantee lists the basis's subspace as public.
func TestBasisSubspaceWhitensPrivately(t *testing.T) {
	d := shifted(500, 12, 3, 1)
	basis := shifted(300, 12, 3, 2)
	res, err := solvers.Fit(context.Background(), "dpplmean", d, solvers.Options{
		Privacy:   accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(1)},
		Transform: solvers.TransformSpec{Kind: solvers.TransformWhiten, Dims: 5, Basis: basis, BasisName: "the basis rows B", Subspace: true, Ridge: solvers.RidgeSample},
	})
	if err != nil {
		t.Fatal(err)
	}
	if all := mechanismNames(res); !strings.Contains(all, "transform: noisy feature sum") || !strings.Contains(all, "second-moment") {
		t.Errorf("releases %q: want the mean's and the matrix's", all)
	}
	if tr := res.Prep.Transform; tr == nil || tr.Dims != 5 || tr.Kind != solvers.TransformWhiten || len(tr.Projection) != 5*12 {
		t.Fatalf("transform %+v, want whiten with 5 directions", tr)
	}
	if res.Hyperparameters["transform_share"] != solvers.DefaultTransformShare(solvers.TransformWhiten) || res.Hyperparameters["transform_subspace"] != true {
		t.Errorf("hyperparameters %v", res.Hyperparameters)
	}
	if assumed := assumedTexts(res); !strings.Contains(assumed, "whiten subspace), learned from the basis rows B") {
		t.Errorf("the guarantee does not list the basis: %q", assumed)
	}
	if eps := float64(res.Guarantee.Epsilon); eps > 1 || eps < 0.99 {
		t.Errorf("ε = %v, want the target 1", eps)
	}
}

// mechanismNames is a result's releases, as its guarantee names them.
func mechanismNames(res *solvers.Result) string {
	var names []string
	for _, m := range res.Guarantee.Mechanisms {
		names = append(names, m.Name)
	}
	return strings.Join(names, "; ")
}

// assumedTexts is what a result's guarantee assumes public, a line each.
func assumedTexts(res *solvers.Result) string {
	var assumed []string
	for _, a := range res.Guarantee.Assumptions() {
		assumed = append(assumed, a.Text())
	}
	return strings.Join(assumed, "\n")
}

// TestAutoChoosesFromPublicQuantitiesOnly (#41 acceptance): auto's
// choice — method, transform, its directions, the basis or not, and the
// words saying why — is the same for two datasets of the same n, D and
// classes whose rows differ, at every ε, without extra features, with a
// basis and with public ones (its ridge included: the sample ridge
// wherever n ≤ 16·D, under DPPL-Mean and DP-SGD with public features,
// whose whitening it takes from n·μ = 60).
// From n·μ = 60 to 100 the whitening it chooses is gated on its released mean
// (solvers.AutoGate): the gate's outcome is that release's
// post-processing and may differ, so a spread dataset (its gate closed)
// must give the same method and reasons, not the same transform. With
// public features DPPL-Mean's prototypes are refined on them below
// n·μ = 140 (solvers.AutoRefine), and its whitening keeps the span of
// their clusters (solvers.AutoClusters): that too is chosen, not read,
// and the span is learned from the public rows alone (the same for
// both datasets, dims included).
func TestAutoChoosesFromPublicQuantitiesOnly(t *testing.T) {
	// n ≤ 16·D and D ≥ solvers.AutoSubspaceMinDim: the basis's subspace at n·μ 100–300
	a, b := shifted(600, 128, 10, 1), shifted(600, 128, 10, 99)
	spread := blobs(600, 128, 10, 5)
	basis := shifted(200, 128, 10, 7)
	for _, eps := range []float64{0.1, 0.3, 0.5, 1, 8, 64} { // 0.5: n·μ ≈ 81, gated
		for _, src := range []string{"", "basis", "public"} {
			withBasis := src == "basis"
			choice := func(d *solvers.Data) string {
				o := solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: eps, Delta: 1e-5, Noise: accounting.SeededNoise(3)}}
				switch src {
				case "basis":
					o.Transform.Basis = basis
				case "public":
					o.Transform.Public = basis
				}
				res, err := solvers.Fit(context.Background(), solvers.Auto, d, o)
				if err != nil {
					t.Fatal(err)
				}
				dims := 0
				if res.Prep.Transform != nil {
					dims = res.Prep.Transform.Dims
				}
				return fmt.Sprintf("%s %v dims=%d basis=%v subspace=%v source=%v ridge=%v gate=%v clusters=%v", res.Method, res.Hyperparameters["auto"], dims, res.Hyperparameters["transform_basis"], res.Hyperparameters["transform_subspace"], res.Hyperparameters["transform_source"], res.Hyperparameters["transform_ridge"], strings.SplitN(fmt.Sprint(res.Hyperparameters["transform_gate"]), ":", 2)[0], res.Hyperparameters["transform_clusters"]) // the gate's outcome; its estimate is the release's
			}
			if x, y := choice(a), choice(b); x != y {
				t.Errorf("ε = %g, features %q: %q and %q", eps, src, x, y)
			}
			why := func(c string) string { return strings.SplitN(c, " dims=", 2)[0] }
			x, y := choice(a), choice(spread)
			if why(x) != why(y) {
				t.Errorf("ε = %g, features %q, spread rows: %q and %q", eps, src, x, y)
			}
			if sub := eps == 1 && withBasis; sub != strings.Contains(x, "subspace=true") {
				t.Errorf("ε = %g, basis %v: the basis's subspace should be chosen at n·μ ≈ 161 only: %q", eps, withBasis, x)
			}
			if public := src == "public" && (eps >= 0.5 || strings.Contains(x, "gate=open")); public != strings.Contains(x, "source=public") || public && strings.HasPrefix(x, "dpfc") == strings.Contains(x, "ridge=sample") {
				t.Errorf("ε = %g, public features: their whitening (below n·μ = 60 if their gate opens), with the sample ridge unless dpfc: %q", eps, x)
			}
			if src == "public" && (eps < 0.5) != (strings.Contains(x, "gate=open") || strings.Contains(x, "gate=closed")) {
				t.Errorf("ε = %g, public features: the whitening should be gated on their mean below n·μ = 60 only: %q", eps, x)
			}
			if refine := src == "public" && eps <= 0.5; refine != strings.Contains(x, "refine=1") {
				t.Errorf("ε = %g, features %q: DPPL-Mean's prototypes should be refined on the public rows below n·μ = 140 only: %q", eps, src, x)
			}
			want := "clusters=<nil>"
			switch {
			case src == "public" && eps == 0.5:
				want = fmt.Sprintf("clusters=%d", solvers.AutoClustersLowSNR)
			case src == "public" && eps == 1:
				want = fmt.Sprintf("clusters=%d", solvers.AutoClusters)
			}
			if !strings.Contains(x, want) {
				t.Errorf("ε = %g, features %q: want %s (the public rows' cluster span where DPPL-Mean runs on their ungated whitening): %q", eps, src, want, x)
			}
			if eps >= 8 && src != "public" && !strings.Contains(x, "ridge=sample") {
				t.Errorf("ε = %g, basis %v: n ≤ 16·D should take the sample ridge at any n·μ: %q", eps, withBasis, x)
			}
			if lp := eps == 8; lp != strings.HasPrefix(x, "dplp ") {
				t.Errorf("ε = %g, features %q: DP-LP should be chosen at n·μ ≈ 1000 only: %q", eps, src, x)
			}
			if gated := eps == 0.5 && src == ""; src != "public" && (gated != strings.Contains(x, "gate=open") || gated != strings.Contains(y, "gate=closed")) {
				t.Errorf("ε = %g, basis %v: the gate should be open on shifted rows and closed on spread ones only at n·μ ≈ 81: %q, %q", eps, withBasis, x, y)
			}
		}
	}
}

// TestAutoSaysWhenNearChance: below n·μ = solvers.AutoNearChance·√(M/10)
// (≈ 13.7 for these 3 classes) and without public features, auto says its
// fit will do little better than chance, with the rows n·μ =
// solvers.AutoFloor takes at this target (⌈100·z*⌉: z* = 3.7306 at
// (1, 1e-5), μ = 0.268052) and, for an (ε, δ) target, the ε it takes
// with these rows (μ-GDP with μ = 100/n: ε = 13.207 at n = 40, δ = 1e-5,
// by SciPy's brentq on the GDP curve). It reads n, the target, the
// classes and whether public features are given: other rows of the same
// size say the same.
func TestAutoSaysWhenNearChance(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int
		p     accounting.ReleaseOptions
		want  []string // nil: no such note
		other uint64
	}{
		{"40 rows at ε = 1", 40, accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5}, []string{"n·μ = 11 is below 14 (with 3 classes)", "about 374 rows at this ε", "or ε ≈ 13 with these 40"}, 2},
		{"a fixed noise multiplier", 40, accounting.ReleaseOptions{Sigma: 4, Delta: 1e-5}, []string{"n·μ = 10 is below 14", "about 400 rows at this noise multiplier"}, 3},
		{"60 rows at ε = 1, above the bound for 3 classes", 60, accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5}, nil, 2},
		{"public features", 40, accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5}, nil, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			say := func(seed uint64) string {
				var notes []string
				p := c.p
				p.Noise = accounting.SeededNoise(1)
				o := solvers.Options{Privacy: p, Note: func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }}
				if c.name == "public features" {
					o.Transform.Public = shifted(200, 8, 3, 7)
				}
				if _, err := solvers.Fit(context.Background(), solvers.Auto, shifted(c.n, 8, 3, seed), o); err != nil {
					t.Fatal(err)
				}
				for _, n := range notes {
					if strings.Contains(n, "chance") {
						return n
					}
				}
				return ""
			}
			got := say(1)
			if c.want == nil {
				if got != "" {
					t.Errorf("a note where n·μ is above %d: %s", solvers.AutoNearChance, got)
				}
				return
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("note %q lacks %q", got, w)
				}
			}
			if c.p.Sigma > 0 && strings.Contains(got, "ε ≈") {
				t.Errorf("an ε with a fixed noise multiplier: %s", got)
			}
			if other := say(c.other); other != got {
				t.Errorf("other rows of the same size: %q, want %q", other, got)
			}
		})
	}
}
