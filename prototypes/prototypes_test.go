package prototypes

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/solvers"
)

type zeroNoise struct{}

func (zeroNoise) Uint64() uint64          { return 1 << 63 }
func (zeroNoise) GaussianScale() float64  { return 0 }
func (zeroNoise) Seeded() bool            { return true }
func (zeroNoise) Split() accounting.Noise { return zeroNoise{} }

func blobs(n, d, m int, seed uint64) *solvers.Data {
	r := rand.New(rand.NewPCG(seed, 1))
	centers := make([]float64, m*d)
	for i := range centers {
		centers[i] = r.NormFloat64()
	}
	x := &solvers.Data{X: make([]float64, n*d), Y: make([]int32, n), N: n, D: d, M: m}
	for i := 0; i < n; i++ {
		j := i * m / n
		x.Y[i] = int32(j)
		row := x.Row(i)
		var s float64
		for k := range row {
			row[k] = centers[j*d+k] + 0.5*r.NormFloat64()
			s += row[k] * row[k]
		}
		for k := range row {
			row[k] /= math.Sqrt(s)
		}
	}
	return x
}

func TestMeanNoiseOffIsTheClassMean(t *testing.T) {
	d := blobs(90, 4, 3, 1)
	for _, o := range []solvers.Options{
		{Privacy: accounting.ReleaseOptions{Sigma: 1, Delta: 1e-5, Noise: zeroNoise{}}, Distance: "euclidean", PublicCounts: true},
		{Privacy: accounting.ReleaseOptions{Epsilon: math.Inf(1)}, Distance: "euclidean"},
	} {
		method := "dpplmean"
		if math.IsInf(o.Privacy.Epsilon, 1) {
			method = "protomean"
		}
		res, err := solvers.Fit(context.Background(), method, d, o)
		if err != nil {
			t.Fatal(err)
		}
		for c := 0; c < 3; c++ {
			for k := 0; k < 4; k++ {
				var s float64
				for i := c * 30; i < (c+1)*30; i++ {
					s += d.Row(i)[k]
				}
				// float32 blocks summed in float64
				if got := res.Prototypes[c*4+k]; math.Abs(got-s/30) > 1e-6 {
					t.Errorf("%s: prototype[%d][%d] = %v, class mean %v", method, c, k, got, s/30)
				}
			}
		}
		if o.PublicCounts && !slices.ContainsFunc(res.Guarantee.Assumptions(), func(a accounting.Assumption) bool { return a.Kind == accounting.AssumeClassCounts }) {
			t.Errorf("--public-counts not recorded: %v", res.Guarantee.Public)
		}
	}
}

// TestMeanNoiseScale checks DPPL-Mean's releases against its calibration:
// the sums get z·r, the counts (euclidean, private counts) z·count_noise,
// the empirical spread matches (χ², false alarm 1e-6), and μ is exact.
func TestMeanNoiseScale(t *testing.T) {
	d := blobs(400, 64, 4, 2)
	const z = 2.5
	want := map[string]float64{"sums": z * 0.7, "counts": z * 10}
	seen := map[string][]float64{}
	o := solvers.Options{
		Privacy: accounting.ReleaseOptions{Sigma: z, Delta: 1e-5, Noise: accounting.SeededNoise(3), Observe: func(release string, std float64, noise []float64) {
			if !accounting.StdCovers(std, want[release]) {
				t.Errorf("release %s: std %v, want %v", release, std, want[release])
			}
			for _, v := range noise {
				seen[release] = append(seen[release], v/std)
			}
		}},
		Distance: "euclidean",
		Params:   map[string]float64{"clip": 0.7},
	}
	res, err := solvers.Fit(context.Background(), "dpplmean", d, o)
	if err != nil {
		t.Fatal(err)
	}
	xs := seen["sums"]
	var ss float64
	for _, v := range xs {
		ss += v * v
	}
	n := float64(len(xs))
	if zs := (ss - n) / math.Sqrt(2*n); len(xs) != 256 || math.Abs(zs) > 4.89 {
		t.Errorf("sums: %d values, variance z = %.2f", len(xs), zs)
	}
	if len(seen["counts"]) != 4 {
		t.Errorf("counts release: %d values", len(seen["counts"]))
	}
	// μ² = (r/(z r))² + (1/(z·10))²
	if mu := math.Sqrt(1/(z*z) + 1/(z*z*100)); math.Abs(float64(*res.Guarantee.Mu)-mu) > 1e-12 {
		t.Errorf("μ = %v, want %v", *res.Guarantee.Mu, mu)
	}
}

// TestPublicSelectionFrequencies draws DPPL-Public's choice many times on a
// small public set and compares the frequencies with exp(ε·u/Δu)
// normalised, by a χ² test at false-alarm rate 1e-6.
func TestPublicSelectionFrequencies(t *testing.T) {
	d := blobs(12, 3, 2, 4)
	pub := blobs(6, 3, 2, 5)
	pub.Y = make([]int32, pub.N)
	const eps, dmin, dmax = 0.8, 0.5, 1.8
	starts := 6 // class 0 is rows 0..5
	u := utilities(d.X[:starts*3], starts, pub, dmin, dmax)
	p := make([]float64, len(u))
	var z float64
	for j, v := range u {
		p[j] = math.Exp(eps * v / (dmax - dmin))
		z += p[j]
	}
	counts := make([]float64, len(u))
	noise := accounting.SeededNoise(11)
	const draws = 40000
	for i := 0; i < draws; i++ {
		res, err := solvers.Fit(context.Background(), "dpplpublic", d, solvers.Options{
			Privacy: accounting.ReleaseOptions{Epsilon: eps, Noise: noise},
			Public:  pub,
			Params:  map[string]float64{"d_min": dmin, "d_max": dmax},
		})
		if err != nil {
			t.Fatal(err)
		}
		chosen := res.Hyperparameters["chosen_public_rows"].([][]int)
		counts[chosen[0][0]]++
	}
	var chi2 float64
	for j := range u {
		e := draws * p[j] / z
		chi2 += (counts[j] - e) * (counts[j] - e) / e
	}
	df := float64(len(u) - 1)
	crit := df * math.Pow(1-2/(9*df)+4.753424*math.Sqrt(2/(9*df)), 3)
	if chi2 > crit {
		t.Errorf("χ² = %.2f > %.2f: counts %v, probabilities %v", chi2, crit, counts, p)
	}
	// The utilities by the book: Σ clip(1 + cos, d_min, d_max) − d_min.
	for j := 0; j < pub.N; j++ {
		var want float64
		for i := 0; i < starts; i++ {
			var dot float64
			for k := 0; k < 3; k++ {
				dot += d.Row(i)[k] * pub.Row(j)[k]
			}
			want += math.Min(math.Max(1+dot, dmin), dmax) - dmin
		}
		if math.Abs(u[j]-want) > 1e-12 {
			t.Errorf("u[%d] = %v, want %v", j, u[j], want)
		}
	}
	// The unclipped fast path agrees with the pairwise computation.
	lin := utilities(d.X[:starts*3], starts, pub, 0, 2)
	pair := utilities(d.X[:starts*3], starts, pub, 0, 1.9999999999)
	for j := range lin {
		if math.Abs(lin[j]-pair[j]) > 1e-6 {
			t.Errorf("linear utility %v, pairwise %v", lin[j], pair[j])
		}
	}
}

// TestTopKFrequencies checks the joint exponential mechanism for unordered
// top-K against its exact set probabilities: P(S) ∝ exp(ε(u_min(S) −
// u_(K))/Δu), and ∝ exp(ε(u_min(S) − u_(K))/(2Δu)) with the paper's
// exponent (budget convention dppl).
func TestTopKFrequencies(t *testing.T) {
	for _, half := range []bool{false, true} {
		testTopKFrequencies(t, half)
	}
}

func testTopKFrequencies(t *testing.T, half bool) {
	u := []float64{5, 3.5, 3, 1, 0}
	const K, eps = 2, 1.5
	du := 1.0
	noise := accounting.SeededNoise(12)
	type pair [2]int
	counts := map[pair]float64{}
	const draws = 60000
	for i := 0; i < draws; i++ {
		s := sampleTopK(noise, u, K, eps, du, half)
		a, b := s[0], s[1]
		if a > b {
			a, b = b, a
		}
		if a == b {
			t.Fatalf("repeated prototype %v", s)
		}
		counts[pair{a, b}]++
	}
	uK := 3.5
	var z float64
	probs := map[pair]float64{}
	for a := 0; a < 5; a++ {
		for b := a + 1; b < 5; b++ {
			scale := du
			if half {
				scale = 2 * du
			}
			w := math.Exp(eps * (math.Min(u[a], u[b]) - uK) / scale)
			probs[pair{a, b}] = w
			z += w
		}
	}
	var chi2 float64
	for k, w := range probs {
		e := draws * w / z
		chi2 += (counts[k] - e) * (counts[k] - e) / e
	}
	df := float64(len(probs) - 1)
	crit := df * math.Pow(1-2/(9*df)+4.753424*math.Sqrt(2/(9*df)), 3)
	if chi2 > crit {
		t.Errorf("half %v: χ² = %.2f > %.2f: counts %v", half, chi2, crit, counts)
	}
}

func TestPublicRequiresPublicData(t *testing.T) {
	d := blobs(30, 3, 3, 6)
	if _, err := solvers.Fit(context.Background(), "dpplpublic", d, solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 1}}); err == nil {
		t.Error("dpplpublic without --public: no error")
	}
	res, err := solvers.Fit(context.Background(), "dpplpublick", d, solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 1e6}, Public: blobs(20, 3, 2, 7), Params: map[string]float64{"k": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if res.PerClass != 3 || len(res.Prototypes) != 3*3*3 || float64(res.Guarantee.Epsilon) != 1e6 || res.Guarantee.Delta != 0 || *res.Guarantee.Rho != 1e12/8 {
		t.Errorf("dpplpublick: %+v", res.Guarantee)
	}
	res, err = solvers.Fit(context.Background(), "dpplpublic", d, solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 2}, Public: blobs(20, 3, 2, 7), BudgetConvention: "dppl"})
	if err != nil {
		t.Fatal(err)
	}
	if *res.Guarantee.Rho != 2 || res.Guarantee.Note == "" {
		t.Errorf("dppl convention: ρ = %v, note %q", *res.Guarantee.Rho, res.Guarantee.Note)
	}
}

// BenchmarkClippedUtilities measures DPPL-Public's pairwise work with
// clipping on (d_max < 2): one class of 3000 private rows against 30000
// public rows of dimension 256, blocked matrix products; reports
// similarity pairs per second.
func BenchmarkClippedUtilities(b *testing.B) {
	priv := blobs(3000, 256, 1, 1)
	pub := blobs(30000, 256, 1, 2)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		utilities(priv.X, priv.N, pub, 0.5, 1.8)
	}
	b.ReportMetric(float64(priv.N)*float64(pub.N)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
}

// TestUtilityBoundedWithoutNormalisation is the neighbour pair of #15 item
// 2: under --no-normalize a row of norm 100 reached the linear utility
// path n_c + (Σx)·p unclipped and moved a utility by ≈ 100. Every public
// point's utility must move by at most Δu = d_max − d_min when one row is
// added, whatever the rows' scale, on both utility paths.
func TestUtilityBoundedWithoutNormalisation(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const D, n = 4, 30
	x := make([]float64, n*D)
	for i := range x {
		x[i] = 3 * r.NormFloat64() // unnormalised rows
	}
	canary := []float64{100, 0, 0, 0}
	x2 := append(append([]float64(nil), x...), canary...)
	pub := &solvers.Data{X: make([]float64, 8*D), Y: make([]int32, 8), N: 8, D: D, M: 1}
	for i := range pub.X {
		pub.X[i] = 5 * r.NormFloat64() // public rows of any norm too
	}
	pub.X[0], pub.X[1], pub.X[2], pub.X[3] = 7, 0, 0, 0
	for _, c := range []struct{ dmin, dmax float64 }{{0, 2}, {0.5, 1.8}} {
		u := utilities(x, n, pub, c.dmin, c.dmax)
		u2 := utilities(x2, n+1, pub, c.dmin, c.dmax)
		for j := range u {
			if d := u2[j] - u[j]; d < -1e-9 || d > c.dmax-c.dmin+1e-9 {
				t.Errorf("d ∈ [%v, %v]: adding a row of norm 100 moved u[%d] by %v", c.dmin, c.dmax, j, d)
			}
		}
	}
}

// TestPrototypesWithAnEmptyClass: every prototype method fits when a
// class has no rows (#15 item 4): its prototype is pure noise (DPPL-Mean)
// or chosen with all-zero utilities (DPPL-Public(K)).
func TestPrototypesWithAnEmptyClass(t *testing.T) {
	d := blobs(60, 3, 3, 8)
	gap := &solvers.Data{X: d.X, Y: d.Y, N: d.N, D: d.D, M: 4}
	for _, c := range []struct {
		method string
		o      solvers.Options
	}{
		{"dpplmean", solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5}}},
		{"dpplmean", solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5}, Distance: "euclidean"}},
		{"dpplpublic", solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 1}, Public: blobs(20, 3, 2, 7)}},
		{"dpplpublick", solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 1}, Public: blobs(20, 3, 2, 7)}},
	} {
		c.o.Privacy.Noise = accounting.SeededNoise(3)
		res, err := solvers.Fit(context.Background(), c.method, gap, c.o)
		if err != nil {
			t.Errorf("%s %s with an empty class: %v", c.method, c.o.Distance, err)
			continue
		}
		for _, v := range res.Prototypes {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s: prototype value %v", c.method, v)
			}
		}
	}
}

// TestShardUtilitiesAddUp (#42 item 3): a runner's clipped utilities —
// each shard's (ShardUtilities), added up — are the utilities of the
// whole dataset held in memory, examples of several weighted views
// included: a utility is a sum over the rows.
func TestShardUtilitiesAddUp(t *testing.T) {
	const n, D, M = 90, 6, 3
	rng := rand.New(rand.NewPCG(4, 5))
	x := make([]float32, n*D)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	y := make([]int32, n)
	groups := make([]int32, 0, n/3) // examples of 1, 2 or 3 views, labels per example
	for i := 0; i < n; {
		g := min(1+i%3, n-i)
		groups = append(groups, int32(g))
		for k := 0; k < g; k++ {
			y[i+k] = int32((i / 3) % M)
		}
		i += g
	}
	pub := blobs(40, D, M, 7)
	for _, clip := range [][2]float64{{0.5, 2}, {0, 1.5}, {0, 2}} {
		whole, err := solvers.Prepare(x, y, groups, nil, D, M, true)
		if err != nil {
			t.Fatal(err)
		}
		want, err := dataUtilities(context.Background(), whole, M, pub, clip[0], clip[1])
		if err != nil {
			t.Fatal(err)
		}
		// Two shards, each example's views in one of them.
		cut := 0
		for _, g := range groups[:len(groups)/2] {
			cut += int(g)
		}
		sum := make([]float64, M*pub.N)
		for _, part := range [][2]int{{0, cut}, {cut, n}} {
			gs := groups[:len(groups)/2]
			if part[0] > 0 {
				gs = groups[len(groups)/2:]
			}
			d, err := solvers.Prepare(x[part[0]*D:part[1]*D], y[part[0]:part[1]], gs, nil, D, M, true)
			if err != nil {
				t.Fatal(err)
			}
			u, err := ShardUtilities(context.Background(), solvers.DataRows(d), M, true, pub, clip[0], clip[1])
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range u {
				sum[i] += v
			}
		}
		for c := 0; c < M; c++ {
			for j := 0; j < pub.N; j++ {
				if got := sum[c*pub.N+j]; math.Abs(got-want[c][j]) > 1e-12*math.Max(1, math.Abs(want[c][j])) {
					t.Fatalf("clip %v: class %d, public row %d: shards add up to %v, in memory %v", clip, c, j, got, want[c][j])
				}
			}
		}
	}
}
