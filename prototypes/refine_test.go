package prototypes

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/solvers"
)

// unlabeled is a public source of d's rows without their labels.
func unlabeled(d *solvers.Data) solvers.PublicSource {
	return &solvers.Data{X: d.X, N: d.N, D: d.D, M: 1, Y: make([]int32, d.N)}
}

// TestRefineFindsTheClusters: from prototypes far off but each nearest
// its own cluster, one step lands on the public rows' cluster means
// (cosine: their sums; euclidean: their means), and a prototype no row
// is nearest keeps its value.
func TestRefineFindsTheClusters(t *testing.T) {
	const D, M = 6, 3
	pub := &solvers.Data{X: make([]float64, 300*D), Y: make([]int32, 300), N: 300, D: D, M: M}
	r := rand.New(rand.NewPCG(5, 1))
	for i := 0; i < pub.N; i++ { // unit rows near the axes e_0, e_1, e_2
		pub.Y[i] = int32(i % M)
		row := pub.Row(i)
		for k := range row {
			row[k] = 0.1 * r.NormFloat64()
		}
		row[i%M] += 1
		floats.Scale(1/floats.Norm(row, 2), row)
	}
	truth := make([]float64, M*D)
	for i := 0; i < pub.N; i++ {
		floats.Add(truth[int(pub.Y[i])*D:(int(pub.Y[i])+1)*D], pub.Row(i))
	}
	for _, dist := range []string{"cosine", "euclidean"} {
		protos := make([]float64, (M+1)*D)
		for c := 0; c < M; c++ {
			p := protos[c*D : (c+1)*D]
			copy(p, truth[c*D:(c+1)*D])
			floats.Scale(1/100.0, p)
			p[c] += 0.3 // off the mean, still nearest its own cluster
		}
		far := protos[M*D:]
		for k := range far {
			far[k] = -50 // a fourth prototype no row is nearest
		}
		keep := append([]float64(nil), far...)
		drew, err := refine(context.Background(), protos, M+1, D, solvers.Preprocessing{Normalize: true}, unlabeled(pub), dist, 1)
		if err != nil {
			t.Fatal(err)
		}
		for c := 0; c < M; c++ {
			if drew[c] != 100 {
				t.Errorf("%s: prototype %d drew %d rows, want its cluster's 100", dist, c, drew[c])
			}
			want := append([]float64(nil), truth[c*D:(c+1)*D]...)
			if dist == "euclidean" {
				floats.Scale(1/100.0, want)
			}
			if !floats.EqualApprox(protos[c*D:(c+1)*D], want, 1e-12) {
				t.Errorf("%s: prototype %d = %v, want %v", dist, c, protos[c*D:(c+1)*D], want)
			}
		}
		if drew[M] != 0 || !floats.Equal(far, keep) {
			t.Errorf("%s: the prototype no row is nearest drew %d and moved to %v", dist, drew[M], far)
		}
	}
}

// TestRefineIsPostProcessing: dpplmean with refine is dpplmean's
// release, the same noise drawn, then refine on the public rows: the
// private rows reach the refined prototypes only through the release.
// A copy that also read the private rows there would fail it.
func TestRefineIsPostProcessing(t *testing.T) {
	const D, M = 5, 4
	d, pub := blobs(80, D, M, 9), blobs(400, D, M, 10)
	fit := func(steps float64) *solvers.Result {
		t.Helper()
		o := solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(4)}}
		if steps > 0 {
			o.Params, o.Public = map[string]float64{"refine": steps}, unlabeled(pub)
		}
		res, err := solvers.Fit(context.Background(), "dpplmean", d, o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	released, refined := fit(0), fit(1)
	if floats.Equal(released.Prototypes, refined.Prototypes) {
		t.Fatal("refine left the released prototypes as they were")
	}
	want := append([]float64(nil), released.Prototypes...)
	if _, err := refine(context.Background(), want, M, D, released.Prep, unlabeled(pub), "cosine", 1); err != nil {
		t.Fatal(err)
	}
	if !floats.Equal(refined.Prototypes, want) {
		t.Errorf("dpplmean with refine = 1 is not its release refined on the public rows:\n%v\n%v", refined.Prototypes, want)
	}
	if math.Abs(refined.NoiseMultiplier-released.NoiseMultiplier) > 0 {
		t.Errorf("refine changed the noise: z %v against %v", refined.NoiseMultiplier, released.NoiseMultiplier)
	}
	listed := false
	for _, a := range refined.Guarantee.Assumptions() {
		listed = listed || a.Kind == accounting.AssumePublicFeatures && strings.Contains(strings.Join(a.Uses, "; "), "refined on them")
	}
	if !listed {
		t.Errorf("the guarantee does not list the public features as refining the prototypes: %v", refined.Guarantee.Assumptions())
	}
	if refined.Hyperparameters["refine"] != 1 {
		t.Errorf("refine not recorded: %v", refined.Hyperparameters)
	}
}

// TestRefineNeedsPublicRows: refine without public rows, or out of its
// range, is refused before anything is released; public rows without
// refine steps are noted as unused.
func TestRefineNeedsPublicRows(t *testing.T) {
	d := blobs(40, 3, 2, 1)
	for _, c := range []struct {
		o    solvers.Options
		want string
	}{
		{solvers.Options{Params: map[string]float64{"refine": 1}}, "needs --public"},
		{solvers.Options{Params: map[string]float64{"refine": 11}, Public: blobs(20, 3, 2, 7)}, "from 0 to 10"},
		{solvers.Options{Params: map[string]float64{"refine": 0.5}, Public: blobs(20, 3, 2, 7)}, "from 0 to 10"},
	} {
		released := false
		c.o.Privacy = accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(1),
			Observe: func(string, float64, []float64) { released = true }}
		_, err := solvers.Fit(context.Background(), "dpplmean", d, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one saying %q", c.o.Params, err, c.want)
		}
		if released {
			t.Errorf("%v: noise was drawn before the refusal", c.o.Params)
		}
	}
}

func TestUnusedPublicRowsAreNoted(t *testing.T) {
	var notes []string
	o := solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(1)}, Public: blobs(20, 3, 2, 7),
		Note: func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }}
	if _, err := solvers.Fit(context.Background(), "dpplmean", blobs(40, 3, 2, 1), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "--public rows are not used") {
		t.Errorf("notes %q: want one saying the public rows are not used", notes)
	}
}
