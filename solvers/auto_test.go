package solvers

import (
	"context"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
)

func TestChooseAuto(t *testing.T) {
	for _, c := range []struct {
		n, zStar float64
		public   bool
		method   string
	}{
		{600, 3.73, false, "dpsgd"},       // ε = 1: n·μ = 161
		{6000, 3.73, true, "dpsgd"},       // n·μ = 1608
		{30000, 3.73, false, "dpfc"},      // n·μ = 8042
		{6000, 0.6, false, "dpfc"},        // ε = 8: n·μ = 9996
		{30000, 243.8, false, "dpsgd"},    // ε = 0.01: n·μ = 123
		{AutoThreshold, 1, false, "dpfc"}, // the threshold itself
	} {
		got := ChooseAuto(c.n, c.zStar, c.public, 0)
		transform := TransformWhiten
		if c.method == "dpplmean" {
			transform = TransformNone
		}
		if got.Method != c.method || got.Transform != transform || got.Public != c.public || !strings.Contains(got.Why, "n·μ") {
			t.Errorf("n = %v, z* = %v: %+v, want %s", c.n, c.zStar, got, c.method)
		}
	}
}

// TestChooseAutoWithABasis: basis features make auto fit DPPL-Mean on
// their top directions below n·μ = AutoBasisThreshold (32 of them, 16
// below AutoFloor, at most D/4, at least 8); above it, or with public
// features, the basis is not used.
func TestChooseAutoWithABasis(t *testing.T) {
	for _, c := range []struct {
		n, zStar float64
		public   bool
		d        int
		method   string
		dims     int
		basis    bool
	}{
		{600, 3.73, false, 256, "dpplmean", 32, true}, // ε = 1: n·μ = 161
		{600, 3.73, false, 128, "dpplmean", 32, true},
		{600, 3.73, false, 64, "dpplmean", 16, true}, // D/4
		{600, 12, false, 256, "dpplmean", 16, true},  // n·μ = 50
		{600, 12, false, 40, "dpplmean", 10, true},
		{600, 12, false, 20, "dpplmean", 8, true},
		{6000, 34.5, false, 128, "dpplmean", 32, true}, // n·μ = 174
		{6000, 31, false, 128, "dpsgd", 0, false},      // ε = 0.1: n·μ = 194
		{600, 2.1, false, 256, "dpsgd", 0, false},      // ε = 2: n·μ = 286
		{6000, 3.73, false, 256, "dpsgd", 0, false},    // n·μ = 1608
		{600, 3.73, true, 256, "dpsgd", 0, false},      // public features: the transform is theirs
	} {
		got := ChooseAuto(c.n, c.zStar, c.public, c.d)
		if got.Method != c.method || got.Dims != c.dims || got.Basis != c.basis {
			t.Errorf("n = %v, z* = %v, D = %d, public %v: %+v", c.n, c.zStar, c.d, c.public, got)
		}
	}
}

// TestAutoRunsItsChoice: auto fits the method it chose with its
// transform, records why, keeps a transform the caller asked for, and
// refuses hyperparameters (they belong to the method it will choose).
func TestAutoRunsItsChoice(t *testing.T) {
	d := shifted(400, 8, 3, 1)
	res, err := Fit(context.Background(), Auto, d, Options{Privacy: accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(1)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Method != "dpsgd" || res.Prep.Transform == nil || res.Prep.Transform.Kind != TransformWhiten || res.Hyperparameters["auto"] == nil {
		t.Errorf("auto: method %s, transform %+v, why %v", res.Method, res.Prep.Transform, res.Hyperparameters["auto"])
	}
	if eps := float64(res.Guarantee.Epsilon); eps > 1 || eps < 0.99 {
		t.Errorf("auto: ε = %v", eps)
	}
	res, err = Fit(context.Background(), Auto, d, Options{Privacy: accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(1)}, Transform: TransformSpec{Kind: TransformCenter}})
	if err != nil || res.Prep.Transform.Kind != TransformCenter {
		t.Errorf("auto with --transform center: %v %+v", err, res)
	}
	if _, err := Fit(context.Background(), Auto, d, Options{Privacy: accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5}, Params: map[string]float64{"lr": 1}}); err == nil || !strings.Contains(err.Error(), "auto has no hyperparameter lr") {
		t.Errorf("auto with a hyperparameter: %v", err)
	}
}
