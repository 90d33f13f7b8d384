package solvers

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
)

func TestChooseAuto(t *testing.T) {
	for _, c := range []struct {
		n, zStar  float64
		public    bool
		method    string
		transform string
		ridge     string
		gate      float64
	}{
		{600, 12, false, "dpplmean", TransformNone, "", 0},                    // ε = 0.3: n·μ = 50, below the gate's floor
		{600, 7.5, false, "dpplmean", TransformWhiten, RidgeSample, AutoGate}, // n·μ = 80: gated
		{600, 12, true, "dpplmean", TransformWhiten, RidgeSample, AutoGate},   // with public features below the floor: theirs, gated on their mean
		{6000, 120, true, "dpplmean", TransformNone, "", 0},                   // above 16·D: no transform
		{600, 7.5, true, "dpplmean", TransformWhiten, RidgeSample, 0},         // n·μ = 80, n ≤ 16·D: their whitening, ungated
		{AutoGateFloor, 1, false, "dpplmean", TransformWhiten, RidgeSample, AutoGate},
		{600, 3.73, false, "dpplmean", TransformWhiten, RidgeSample, 0},    // ε = 1: n·μ = 161
		{6000, 31, false, "dpplmean", TransformWhiten, RidgeSample, 0},     // ε = 0.1: n·μ = 194
		{600, 1.05, false, "dplp", TransformWhiten, RidgeSample, 0},        // ε = 4: n·μ = 571
		{600, 1.5, false, "dpsgd", TransformWhiten, RidgeSample, 0},        // n·μ = 400, below AutoLinearProbeFloor
		{600, 3.73, true, "dpplmean", TransformWhiten, RidgeSample, 0},     // public features, n ≤ 16·D: the private rule
		{600, 1.05, true, "dplp", TransformWhiten, RidgeSample, 0},         // n·μ = 571
		{600, 1.5, true, "dpsgd", TransformWhiten, RidgeSample, 0},         // n·μ = 400
		{600, 0.46, true, "dplp", TransformWhiten, RidgeSample, 0},         // n·μ = 1304
		{30000, 30.7, false, "dplp", TransformWhiten, "", 0},               // ε = 0.1: n·μ = 977
		{6000, 3.73, true, "dplp", TransformWhiten, "", 0},                 // n·μ = 1608: their noise ridge
		{30000, 3.73, false, "dpfc", TransformWhiten, "", 0},               // n·μ = 8042
		{6000, 0.6, false, "dpfc", TransformWhiten, "", 0},                 // ε = 8: n·μ = 9996
		{30000, 243.8, false, "dpplmean", TransformWhiten, RidgeSample, 0}, // ε = 0.01: n·μ = 123
		{600, 0.46, false, "dplp", TransformWhiten, RidgeSample, 0},        // ε = 8: n·μ = 1304, n ≤ 16·D
		{4096, 4096.0 / 2499, false, "dplp", TransformWhiten, RidgeSample, 0},
		{4096, 4096.0 / AutoLinearProbe, false, "dpsgd", TransformWhiten, RidgeSample, 0},
		{4097, 4097.0 / 2499, false, "dplp", TransformWhiten, "", 0}, // n > 16·D
		{4097, 4097.0 / AutoLinearProbe, false, "dpsgd", TransformWhiten, "", 0},
		{2000, 0.46, false, "dpfc", TransformWhiten, RidgeSample, 0},      // n·μ = 4348, n ≤ 16·D
		{2 * AutoThreshold, 2, false, "dpfc", TransformWhiten, "", 0},     // the thresholds themselves
		{10 * AutoSampleRidge, 10, false, "dplp", TransformWhiten, "", 0}, // (n above 16·D)
		{10 * AutoLinearProbe, 10, false, "dpsgd", TransformWhiten, "", 0},
		{AutoFewRows * 256, 1, false, "dpfc", TransformWhiten, RidgeSample, 0},
		{AutoFewRows*256 + 1, 1, false, "dpfc", TransformWhiten, "", 0},
		{AutoFewRows * 256, 1, true, "dpfc", TransformWhiten, "", 0},                 // public features: dpfc keeps their noise ridge
		{AutoFewRows*256 + 1, 20, true, "dpplmean", TransformWhiten, RidgeSample, 0}, // n·μ = 205, n > 16·D: their whitening, sample ridge (AutoPublicPrototypes)
		{6000, 60, true, "dpplmean", TransformWhiten, RidgeSample, 0},                // n·μ = 100
		{AutoFewRows*256 + 1, (AutoFewRows*256 + 1) / (AutoPublicPrototypes - 0.1), true, "dpplmean", TransformWhiten, RidgeSample, 0},
		{AutoFewRows*256 + 1, (AutoFewRows*256 + 1) / AutoPublicPrototypes, true, "dpsgd", TransformWhiten, "", 0},
		{AutoPrototypes, 1, false, "dpsgd", TransformWhiten, RidgeSample, 0},
		{AutoFloor, 1, false, "dpplmean", TransformWhiten, RidgeSample, 0},
		{AutoFloor, 1, true, "dpplmean", TransformWhiten, RidgeSample, 0},
		{AutoGateFloor, 1, true, "dpplmean", TransformWhiten, RidgeSample, 0},
		{AutoGateFloor - 1, 1, true, "dpplmean", TransformWhiten, RidgeSample, AutoGate},
	} {
		got := ChooseAuto(c.n, c.zStar, c.public, 256, 0, 10, "")
		if got.Method != c.method || got.Transform != c.transform || got.Ridge != c.ridge || got.Gate != c.gate || got.Public != c.public || got.Basis || !strings.Contains(got.Why, "n·μ") {
			t.Errorf("n = %v, z* = %v, public %v: %+v, want %s %s %q", c.n, c.zStar, c.public, got, c.method, c.transform, c.ridge)
		}
	}
}

// TestAutoRefine: with public features, DPPL-Mean's prototypes are
// refined on them (refine = 1) below n·μ = AutoRefine, whatever n, with
// ten classes or more; not above it, not with fewer classes, and never
// without public features.
func TestAutoRefine(t *testing.T) {
	for _, c := range []struct {
		n, zStar float64
		public   bool
		refine   bool
	}{
		{600, 12, true, true},    // n·μ = 50: gated whitening
		{600, 4.8, true, true},   // ε = 0.75: n·μ = 125
		{600, 3.73, true, false}, // ε = 1: n·μ = 161
		{600, 600 / (AutoRefine - 0.1), true, true},
		{600, 600 / float64(AutoRefine), true, false}, // DPPL-Mean to 300, not refined
		{6000, 100, true, true},                       // n·μ = 60, n > 16·D: no transform, refined
		{6000, 50, true, true},                        // n·μ = 120: their whitening
		{6000, 31, true, false},                       // n·μ = 194: their whitening, not refined
		{600, 3.73, false, false},
		{600, 12, false, false},
	} {
		got := ChooseAuto(c.n, c.zStar, c.public, 256, 0, 10, "")
		refined := got.Params["refine"] == 1
		if refined != c.refine || refined && (got.Method != "dpplmean" || len(got.Params) != 1) {
			t.Errorf("n = %v, z* = %v, public %v: %+v, want refined %v", c.n, c.zStar, c.public, got, c.refine)
		}
		if refined && !strings.Contains(got.Why, "n·μ") {
			t.Errorf("%+v: the reason does not give n·μ", got)
		}
	}
	// Fewer than AutoPrototypeClasses classes: a class is several of the
	// public rows' clusters, and refining pulls it onto one.
	for _, classes := range []int{2, 5, 9} {
		for _, n := range []float64{600, 6000} {
			if got := ChooseAuto(n, n/80, true, 256, 0, classes, ""); got.Method != "dpplmean" || got.Params != nil {
				t.Errorf("%d classes, n = %v, n·μ = 80: %+v, want dpplmean not refined", classes, n, got)
			}
		}
	}
}

// TestAutoClusters: with public features, DPPL-Mean on their ungated
// whitening keeps the span of AutoClustersLowSNR of their clusters
// below n·μ = AutoRefine and AutoClusters above, scaled
// with more than ten classes; without public features, gated, without
// a transform or with another method, none.
func TestAutoClusters(t *testing.T) {
	for _, c := range []struct {
		n, zStar float64
		public   bool
		classes  int
		want     int
	}{
		{600, 7.5, true, 10, AutoClustersLowSNR}, // n·μ = 80
		{600, 4.8, true, 10, AutoClustersLowSNR}, // n·μ = 125
		{600, 3.73, true, 10, AutoClusters},      // n·μ = 161
		{600, 2.2, true, 10, AutoClusters},       // n·μ = 273
		{600, 3.73, true, 2, AutoClusters},       // fewer classes: the same span
		{600, 7.5, true, 5, AutoClustersLowSNR},  // (not refined)
		{600, 3.73, true, 20, 2 * AutoClusters},  // twice the classes: twice the span
		{600, 4.8, true, 15, 36},                 // ⌈24·15/10⌉
		{6000, 50, true, 10, AutoClustersLowSNR}, // n·μ = 120, n > 16·D
		{6000, 31, true, 10, AutoClusters},       // n·μ = 194
		{6000, 11, true, 10, AutoClusters},       // n·μ = 545
		{600, 12, true, 10, 0},                   // n·μ = 50: gated on their mean
		{6000, 100, true, 10, 0},                 // n·μ = 60, n > 16·D: no transform
		{600, 1.5, true, 10, 0},                  // n·μ = 400, n ≤ 16·D: dpsgd
		{6000, 9, true, 10, 0},                   // n·μ = 667, n > 16·D: dpsgd
		{600, 3.73, false, 10, 0},                // private whitening
	} {
		got := ChooseAuto(c.n, c.zStar, c.public, 256, 0, c.classes, "")
		if got.Clusters != c.want {
			t.Errorf("n = %v, z* = %v, public %v, %d classes: %s with %d clusters, want %d", c.n, c.zStar, c.public, c.classes, got.Method, got.Clusters, c.want)
		}
	}
}

// TestChooseAutoWithABasis: basis features make auto fit DPPL-Mean on
// 16 of their top directions (at most D/4, at least 8) below n·μ =
// AutoFloor, and whiten privately within their top 32 from there to
// AutoPrototypes with at most AutoFewRows·D rows and D ≥
// AutoSubspaceMinDim; elsewhere, or with public features, the basis is
// not used.
func TestChooseAutoWithABasis(t *testing.T) {
	for _, c := range []struct {
		n, zStar float64
		public   bool
		d        int
		method   string
		dims     int
		basis    bool
	}{
		{600, 12, false, 256, "dpplmean", 16, true}, // ε = 0.3: n·μ = 50
		{600, 12, false, 40, "dpplmean", 10, true},  // D/4
		{600, 12, false, 20, "dpplmean", 8, true},
		{600, 12, false, 6, "dpplmean", 6, true},
		{600, 3.73, false, 256, "dpplmean", 32, true},  // ε = 1: n·μ = 161, whitened within the basis's top 32
		{180, 1.2, false, 24, "dpplmean", 0, false},    // n·μ = 150, D < AutoSubspaceMinDim: the private whitening in all D
		{600, 3.73, false, 64, "dpplmean", 0, false},   // the same at D = 64
		{600, 3.73, false, 128, "dpplmean", 32, true},  // D = 128: within the basis's top 32
		{600, 3.73, false, 32, "dpplmean", 0, false},   // n > 16·D: the private whitening in all D
		{2000, 11.2, false, 128, "dpplmean", 32, true}, // ε = 0.3: n·μ = 179
		{600, 2.5, false, 256, "dpplmean", 32, true},   // n·μ = 240
		{600, 1.9, false, 256, "dpsgd", 0, false},      // n·μ = 316
		{6000, 31, false, 256, "dpplmean", 0, false},   // ε = 0.1: n·μ = 194, n > 16·D
		{6000, 3.73, false, 256, "dplp", 0, false},     // n·μ = 1608
		{600, 12, true, 256, "dpplmean", 0, false},     // public features: the transform is theirs
	} {
		got := ChooseAuto(c.n, c.zStar, c.public, c.d, c.d, 10, "")
		if got.Method != c.method || got.Dims != c.dims || got.Basis != c.basis || got.Subspace != (c.basis && got.Transform == TransformWhiten) {
			t.Errorf("n = %v, z* = %v, D = %d, public %v: %+v", c.n, c.zStar, c.d, c.public, got)
		}
	}
}

// TestAutoClasses: with fewer than AutoPrototypeClasses classes
// DPPL-Mean's bands end at AutoPrototypes·M/10 on private data (basis
// features or not), and the rule for n·μ ≥ AutoPrototypes takes over;
// with public features, or more classes, the bands are as at 10.
func TestAutoClasses(t *testing.T) {
	for _, c := range []struct {
		n, zStar          float64
		public            bool
		basisDim, classes int
		method            string
	}{
		{600, 3.73, false, 0, 10, "dpplmean"}, // ε = 1: n·μ = 161
		{600, 3.73, false, 0, 100, "dpplmean"},
		{600, 3.73, false, 0, 5, "dpsgd"},   // ≥ 150
		{600, 4.3, false, 0, 5, "dpplmean"}, // n·μ = 140
		{600, 3.73, false, 256, 5, "dpsgd"}, // basis features
		{600, 4.3, false, 256, 5, "dpplmean"},
		{600, 3.73, true, 0, 5, "dpplmean"}, // public features: their bands stay
		{600, 7.5, false, 0, 2, "dpsgd"},    // n·μ = 80 ≥ 60: neither the gate nor the basis
		{600, 7.5, false, 256, 2, "dpsgd"},
		{600, 7.5, true, 0, 2, "dpplmean"},
		{600, 10.5, false, 0, 2, "dpplmean"}, // n·μ = 57
		{6000, 31, false, 0, 5, "dpsgd"},     // ε = 0.1: n·μ = 194, n > 16·D
		{6000, 31, false, 0, 10, "dpplmean"},
		{60, 1, false, 0, 2, "dpsgd"}, // the bound itself
		{59, 1, false, 0, 2, "dpplmean"},
		{150, 1, false, 0, 5, "dpsgd"},
	} {
		got := ChooseAuto(c.n, c.zStar, c.public, 256, c.basisDim, c.classes, "")
		few := fewRows(c.n, 256)
		if got.Method != c.method || (got.Basis || got.Subspace) && c.method != "dpplmean" {
			t.Errorf("n = %v, z* = %v, public %v, basis %d, %d classes: %+v, want %s", c.n, c.zStar, c.public, c.basisDim, c.classes, got, c.method)
			continue
		}
		if c.method == "dpsgd" && (got.Ridge != RidgeSample || (got.Params != nil) != few || !strings.Contains(got.Why, fmt.Sprintf("end at n·μ = %.0f with %d classes)", AutoPrototypes*float64(c.classes)/10, c.classes))) {
			t.Errorf("n = %v, z* = %v, %d classes: DP-SGD as at n·μ ≥ %d (the sample ridge; clip and steps with few rows), and why: %+v", c.n, c.zStar, c.classes, AutoPrototypes, got)
		}
	}
}

// TestAutoRunsItsChoice: auto fits the method it chose with its
// transform, records why, keeps a transform the caller asked for, and
// refuses hyperparameters (they belong to the method it will choose).
func TestAutoRunsItsChoice(t *testing.T) {
	d := shifted(400, 8, 3, 1)
	res, err := Fit(context.Background(), Auto, d, Options{Privacy: accounting.ReleaseOptions{Epsilon: 4, Delta: 1e-5, Noise: accounting.SeededNoise(1)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Method != "dpsgd" || res.Prep.Transform == nil || res.Prep.Transform.Kind != TransformWhiten || res.Hyperparameters["auto"] == nil || res.Hyperparameters["transform_ridge"] != RidgeSample {
		t.Errorf("auto: method %s, transform %+v, hyperparameters %v", res.Method, res.Prep.Transform, res.Hyperparameters)
	}
	if eps := float64(res.Guarantee.Epsilon); eps > 4 || eps < 3.99 {
		t.Errorf("auto: ε = %v", eps)
	}
	res, err = Fit(context.Background(), Auto, d, Options{Privacy: accounting.ReleaseOptions{Epsilon: 4, Delta: 1e-5, Noise: accounting.SeededNoise(1)}, Transform: TransformSpec{Kind: TransformCenter}})
	if err != nil || res.Prep.Transform.Kind != TransformCenter {
		t.Errorf("auto with --transform center: %v %+v", err, res)
	}
	if _, err := Fit(context.Background(), Auto, d, Options{Privacy: accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5}, Params: map[string]float64{"lr": 1}}); err == nil || !strings.Contains(err.Error(), "auto has no hyperparameter lr") {
		t.Errorf("auto with a hyperparameter: %v", err)
	}
}

// TestGateTells: auto gates its whitening below AutoFloor only where the
// gate's estimate of ‖m‖² has a standard deviation of at most half the
// gate on spread features: from n·μ ≈ 47.6 at D = 256, ≈ 40 at 128, ≈ 62.6
// at 768 and 80 at 2048 (√(2D)/(s²·0.05) ≤ 0.2).
func TestGateTells(t *testing.T) {
	for _, c := range []struct {
		snr  float64
		dim  int
		want bool
	}{{50, 256, true}, {47, 256, false}, {48, 256, true}, {41, 128, true}, {39, 128, false}, {62, 768, false}, {63, 768, true}, {79, 2048, false}, {81, 2048, true}, {20, 16, false}} {
		if got := gateTells(600, 600/c.snr, c.dim); got != c.want {
			t.Errorf("n·μ = %v, D = %d: %v, want %v", c.snr, c.dim, got, c.want)
		}
	}
}

// TestAutoFewRowsSGD: with at most 16·D rows auto gives DP-SGD
// AutoFewRowsSGD, for Adam only (another optimizer keeps its defaults),
// and says so, with public features too; with more rows, none, and
// another method not these.
// auto takes no hyperparameters of its own, so none can collide.
func TestAutoFewRowsSGD(t *testing.T) {
	for _, c := range []struct {
		n, zStar float64
		public   bool
		want     bool
	}{
		{600, 1.5, false, true},              // n·μ = 400
		{3000, 1, false, true},               // n·μ = 3000
		{600, 1.05, false, false},            // ε = 4: n·μ = 571, dplp (TestAutoLinearProbe)
		{AutoFewRows * 256, 1, false, false}, // n·μ = 4096: dpfc
		{AutoFewRows*256 + 1, 4, false, false},
		{600, 1.5, true, true}, // public features: the same
		{AutoFewRows*256 + 1, 20, true, false},
		{600, 3.73, false, false}, // dpplmean
	} {
		got := ChooseAuto(c.n, c.zStar, c.public, 256, 0, 10, "")
		if sgd := got.Method == "dpsgd" && got.Params != nil; sgd != c.want || (c.want && (got.Params["clip"] != 0.5 || got.Params["steps"] != 100)) {
			t.Errorf("n = %v, z* = %v, public %v: %s params %v", c.n, c.zStar, c.public, got.Method, got.Params)
		}
	}
	d := blobs(300, 40, 3, 7) // 300 ≤ 16·40 rows
	for _, c := range []struct {
		optimizer   string
		clip, steps any
		why         string
	}{
		{"", 0.5, 100, "with clip=0.5, steps=100"},
		{"Adam", 0.5, 100, "with clip=0.5, steps=100"},
		{"sgd", 1.0, 50, ""},
	} {
		res, err := Fit(context.Background(), Auto, d, Options{Optimizer: c.optimizer, Privacy: accounting.ReleaseOptions{Epsilon: 8, Delta: 1e-5, Noise: accounting.SeededNoise(1)}})
		if err != nil {
			t.Fatal(err)
		}
		why := fmt.Sprint(res.Hyperparameters["auto"])
		if res.Method != "dpsgd" || res.Hyperparameters["clip"] != c.clip || res.Hyperparameters["steps"] != c.steps || strings.Contains(why, " with ") != (c.why != "") || !strings.Contains(why, c.why) {
			t.Errorf("optimizer %q: %s clip %v steps %v, %q", c.optimizer, res.Method, res.Hyperparameters["clip"], res.Hyperparameters["steps"], why)
		}
	}
	if _, err := Fit(context.Background(), Auto, d, Options{Params: map[string]float64{"clip": 2}, Privacy: accounting.ReleaseOptions{Epsilon: 8, Delta: 1e-5}}); err == nil {
		t.Error("auto took a clip of its own")
	}
}

// TestAutoLinearProbe: auto fits DP-LP with AutoLinearProbeParams from
// n·μ = AutoLinearProbeFloor (with at most 16·D rows; AutoSampleRidge
// with more) to AutoLinearProbe, with public features too, and says so;
// with an optimizer named (DP-SGD's), DP-SGD as before.
func TestAutoLinearProbe(t *testing.T) {
	for _, c := range []struct {
		n, zStar  float64
		public    bool
		optimizer string
		method    string
	}{
		{600, 1.2, false, "", "dplp"},   // n·μ = 500
		{600, 1.21, false, "", "dpsgd"}, // 496
		{600, 0.46, false, "", "dplp"},  // ε = 8: 1304
		{600, 0.46, false, "adam", "dpsgd"},
		{600, 0.46, true, "", "dplp"}, // public features too
		{8000, 4, true, "", "dplp"},
		{4096, 1.6, false, "", "dpsgd"},  // 2560
		{8000, 4, false, "", "dplp"},     // 2000, n > 16·D
		{8000, 12, false, "", "dpsgd"},   // 667, below AutoSampleRidge with n > 16·D
		{8000, 11.5, false, "", "dpsgd"}, // 696
		{8000, 11.4, false, "", "dplp"},  // 702
	} {
		got := ChooseAuto(c.n, c.zStar, c.public, 256, 0, 10, c.optimizer)
		lp := got.Method == "dplp"
		if got.Method != c.method || lp != (got.Params != nil && got.Params["clip"] == 0.4 && len(got.Params) == 1) || lp != strings.Contains(got.Why, "dplp") {
			t.Errorf("n = %v, z* = %v, public %v, optimizer %q: %+v, want %s", c.n, c.zStar, c.public, c.optimizer, got, c.method)
		}
	}
	d := blobs(400, 40, 3, 7) // 400 ≤ 16·40 rows; ε = 8: n·μ ≈ 666
	for _, c := range []struct {
		optimizer, method string
		clip              any
	}{{"", "dplp", 0.4}, {"sgd", "dpsgd", 1.0}, {"adam", "dpsgd", 0.5}} {
		res, err := Fit(context.Background(), Auto, d, Options{Optimizer: c.optimizer, Privacy: accounting.ReleaseOptions{Epsilon: 8, Delta: 1e-5, Noise: accounting.SeededNoise(1)}})
		if err != nil {
			t.Fatal(err)
		}
		why := fmt.Sprint(res.Hyperparameters["auto"])
		if res.Method != c.method || res.Hyperparameters["clip"] != c.clip || res.Prep.Transform == nil || res.Hyperparameters["transform_ridge"] != RidgeSample || strings.Contains(why, "dplp") != (c.method == "dplp") {
			t.Errorf("optimizer %q: %s clip %v, %q", c.optimizer, res.Method, res.Hyperparameters["clip"], why)
		}
	}
}

// TestAutoStreams: auto streams (train.Fit then reads rows in passes, not
// into memory), and FitRows fits exactly what auto's choice fits asked
// for by name.
func TestAutoStreams(t *testing.T) {
	if !Streams(Auto) {
		t.Fatal("auto does not stream")
	}
	d := blobs(400, 40, 3, 7) // ε = 4: n·μ ≈ 370, DP-SGD with at most 16·D rows
	opts := func(spec TransformSpec, params map[string]float64) Options {
		return Options{Privacy: accounting.ReleaseOptions{Epsilon: 4, Delta: 1e-5, Noise: accounting.SeededNoise(1)}, Transform: spec, Params: params}
	}
	a, err := FitRows(context.Background(), Auto, DataRows(d), d.M, opts(TransformSpec{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	b, err := FitRows(context.Background(), "dpsgd", DataRows(d), d.M, opts(TransformSpec{Kind: TransformWhiten, Ridge: RidgeSample}, AutoFewRowsSGD))
	if err != nil {
		t.Fatal(err)
	}
	if a.Method != "dpsgd" || !slices.Equal(a.W, b.W) || !slices.Equal(a.B, b.B) {
		t.Errorf("auto streamed %s, weights equal to dpsgd's: %v", a.Method, slices.Equal(a.W, b.W))
	}
}

// TestNearChanceBelow: AutoNearChance for ten classes, ·√(M/10) with
// fewer (an eighth of the way from chance to perfect came at n·μ ≈ 25, 22
// and 11 for 10, 5 and 2 classes: shift-chance.md), as for
// ten with more.
func TestNearChanceBelow(t *testing.T) {
	for _, c := range []struct {
		classes int
		want    float64
	}{{10, 25}, {5, 17.678}, {2, 11.180}, {1, 11.180}, {3, 13.693}, {100, 25}} {
		if got := nearChanceBelow(c.classes); math.Abs(got-c.want) > 1e-3 {
			t.Errorf("%d classes: %v, want %v", c.classes, got, c.want)
		}
	}
}
