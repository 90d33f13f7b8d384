package solvers

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
)

// TestCentringEstimate checks the estimate on exact sums: rows all the
// same vector hold all their energy in the mean, centred rows none, and
// the noise's expected share is taken out.
func TestCentringEstimate(t *testing.T) {
	for _, c := range []struct {
		name               string
		sum                []float64
		noiseVar, sq, n    float64
		share, stdErrBelow float64
	}{
		{"every row the same unit vector", []float64{100, 0, 0}, 0, 100, 100, 1, 1e-12},
		{"centred", []float64{0, 0, 0}, 0, 100, 100, 0, 1e-12},
		{"half", []float64{math.Sqrt(5000), 0, 0}, 0, 100, 100, 0.5, 1e-12},
		// ‖Σx‖² = 5000 + the noise's expected 3·1000: the same half.
		// Standard error (√6·1000 + 2√(5000·1000))/10⁴ = 0.692.
		{"half, noise removed", []float64{math.Sqrt(8000), 0, 0}, 1000, 100, 100, 0.5, 0.693},
	} {
		got := centring(c.sum, c.noiseVar, c.sq, c.n)
		if math.Abs(got.Share-c.share) > 1e-12 || got.StdErr >= c.stdErrBelow {
			t.Errorf("%s: %+v, want share %g, standard error below %g", c.name, got, c.share, c.stdErrBelow)
		}
	}
}

// TestFarFromCentredIsNoted (#40 item 10): dpls and dpfc note features
// with a large common mean (as a random-weight encoder gives) from the
// statistics they released, and say nothing on centred ones, nor when
// the noise is too large to tell.
func TestFarFromCentredIsNoted(t *testing.T) {
	const n, dim, m = 4000, 32, 4
	offset := func(shift float64) *Data {
		d := blobs(n, dim, m, 5)
		r := rand.New(rand.NewPCG(9, 9))
		common := make([]float64, dim)
		for k := range common {
			common[k] = r.NormFloat64()
		}
		for i := 0; i < n; i++ {
			row := d.Row(i)
			for k := range row {
				row[k] += shift * common[k]
			}
			Preprocessing{Normalize: true}.Apply(row)
		}
		return d
	}
	for _, c := range []struct {
		data    *Data
		epsilon float64
		want    bool
	}{
		{offset(0), 1, false},
		{offset(30), 1, true},
		{offset(30), 0.001, false}, // too noisy to say
	} {
		for _, method := range []string{"dpls", "dpfc"} {
			var notes []string
			_, err := Fit(context.Background(), method, c.data, Options{
				Privacy: accounting.ReleaseOptions{Epsilon: c.epsilon, Delta: 1e-5, Noise: accounting.SeededNoise(3)},
				Note:    func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) },
			})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Contains(strings.Join(notes, "\n"), "far from centred")
			if got != c.want {
				t.Errorf("%s ε = %g: noted %v, want %v (%q)", method, c.epsilon, got, c.want, notes)
			}
		}
	}
}
