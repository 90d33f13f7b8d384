package finetune

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/internal/orttest"
)

// zeroNoise draws no noise and samples every example.
type zeroNoise struct{}

func (zeroNoise) Uint64() uint64          { return 1 << 63 }
func (zeroNoise) GaussianScale() float64  { return 0 }
func (zeroNoise) Seeded() bool            { return true }
func (zeroNoise) Split() accounting.Noise { return zeroNoise{} }

func testData(g *Graph, n, classes int, seed uint64) Data {
	r := rand.New(rand.NewPCG(seed, 1))
	d := Data{Images: make([]float32, n*g.ImageSize()), Labels: make([]int64, n), N: n}
	for i := range d.Images {
		d.Images[i] = float32(r.NormFloat64())
	}
	for i := range d.Labels {
		d.Labels[i] = int64(r.IntN(classes))
	}
	return d
}

func clone(ps [][]float32) [][]float32 {
	out := make([][]float32, len(ps))
	for i, p := range ps {
		out[i] = append([]float32(nil), p...)
	}
	return out
}

// TestPhaseClipsWhatTheAccountantAssumes: without noise, one full-batch
// step (momentum 0, lr 1) moves the trainable parameters by minus the mean
// of the per-example gradients, each clipped jointly over the trainable
// parameters to C — the clipping binds here — and leaves the frozen ones.
func TestPhaseClipsWhatTheAccountantAssumes(t *testing.T) {
	g, params := openTestGraph(t, "mlp")
	d := testData(g, 37, 3, 1)
	const clip = 0.05
	trainable := []bool{false, false, true, true} // the head, as Phase II
	st := &State{Params: clone(params)}
	p := Phase{Name: "test", Trainable: trainable, Steps: 1, Clip: clip, Sigma: 1, LR: 1}
	if err := p.Run(context.Background(), g, d, st, RunOptions{Noise: zeroNoise{}, Chunk: 8}); err != nil {
		t.Fatal(err)
	}
	grads := make([][]float32, len(g.Params))
	for i, pr := range g.Params {
		grads[i] = make([]float32, d.N*pr.Size)
	}
	if err := g.Run(params, d.Images, d.Labels, d.N, grads, make([]float32, d.N)); err != nil {
		t.Fatal(err)
	}
	want := clone(params)
	bound := 0
	for e := 0; e < d.N; e++ {
		var ss float64
		for i, pr := range g.Params {
			if trainable[i] {
				for _, v := range grads[i][e*pr.Size : (e+1)*pr.Size] {
					ss += float64(v) * float64(v)
				}
			}
		}
		f := math.Min(1, clip*clipMargin/math.Sqrt(ss))
		if f < 1 {
			bound++
		}
		for i, pr := range g.Params {
			if trainable[i] {
				for k, v := range grads[i][e*pr.Size : (e+1)*pr.Size] {
					want[i][k] -= float32(f * float64(v) / float64(d.N))
				}
			}
		}
	}
	if bound < d.N/2 {
		t.Fatalf("clipping bound only %d of %d examples; the test wants it to matter", bound, d.N)
	}
	for i := range want {
		for k := range want[i] {
			if math.Abs(float64(st.Params[i][k]-want[i][k])) > 1e-6 {
				t.Fatalf("%s[%d] = %v, want %v (trainable %v)", g.Params[i].Name, k, st.Params[i][k], want[i][k], trainable[i])
			}
		}
	}
	if st.Step != 1 {
		t.Errorf("step %d after one step", st.Step)
	}
}

// TestPhaseNoiseHasTheCalibratedScale: every step adds, to every trainable
// parameter, noise of standard deviation σ·C (a χ² test at false-alarm
// 1e-6), and the phase's mechanisms say exactly that, at the Poisson rate.
func TestPhaseNoiseHasTheCalibratedScale(t *testing.T) {
	g, params := openTestGraph(t, "cnn")
	d := testData(g, 50, 4, 2)
	p := Phase{Name: "phase III", Steps: 3, Batch: 10, Clip: 0.7, Sigma: 1.3, LR: 0.1, Momentum: 0.9}
	var ss float64
	var n, releases int
	o := RunOptions{Noise: accounting.SeededNoise(4), Observe: func(name string, std float64, noise []float64) {
		releases++
		if !accounting.StdCovers(std, 1.3*0.7) || !strings.HasPrefix(name, "phase III: gradient ") {
			t.Errorf("release %q with std %v, want %v", name, std, 1.3*0.7)
		}
		for _, v := range noise {
			ss += (v / std) * (v / std)
			n++
		}
	}}
	st := &State{Params: clone(params)}
	if err := p.Run(context.Background(), g, d, st, o); err != nil {
		t.Fatal(err)
	}
	if releases != 3*len(g.Params) {
		t.Errorf("%d releases, want %d", releases, 3*len(g.Params))
	}
	if z := (ss - float64(n)) / math.Sqrt(2*float64(n)); math.Abs(z) > 4.89 {
		t.Errorf("noise variance off by z = %.2f over %d values", z, n)
	}
	m := p.Mechanisms(d.N)
	if len(m) != 1 || m[0].SamplingRate != 0.2 || m[0].Count != 3 || m[0].Sensitivity != 0.7 || math.Abs(m[0].NoiseStd-1.3*0.7) > 1e-12 {
		t.Errorf("mechanisms %+v", m)
	}
}

// TestPlanMeetsTheTarget: Phase II alone meets share·ε, both together ε,
// and the multipliers are the smallest that do.
func TestPlanMeetsTheTarget(t *testing.T) {
	for _, eps := range []float64{0.5, 1, 8} {
		share := DefaultShare(eps)
		p2 := Phase{Name: "II", Steps: 100, Clip: 1, LR: 1}
		p3 := Phase{Name: "III", Steps: 50, Batch: 100, Clip: 1, LR: 1}
		g, err := Plan(eps, 1e-5, share, 1000, &p2, &p3, accounting.AccountantAuto)
		if err != nil {
			t.Fatal(err)
		}
		if float64(g.Epsilon) > eps {
			t.Errorf("ε = %v: total %v", eps, g.Epsilon)
		}
		g2, _ := accounting.Account(p2.Mechanisms(1000), 1e-5, accounting.AccountantAuto, accounting.Options{})
		if float64(g2.Epsilon) > share*eps {
			t.Errorf("ε = %v: Phase II alone %v > %v", eps, g2.Epsilon, share*eps)
		}
		// A slightly smaller Phase III multiplier misses the target.
		q := p3
		q.Sigma *= 1 - 1e-6
		gq, _ := accounting.Account(append(p2.Mechanisms(1000), q.Mechanisms(1000)...), 1e-5, accounting.AccountantAuto, accounting.Options{})
		if float64(gq.Epsilon) <= eps {
			t.Errorf("ε = %v: Phase III multiplier %v is not the smallest", eps, p3.Sigma)
		}
	}
	if DefaultShare(0.1) != 1 || math.Abs(DefaultShare(1)-0.5) > 1e-12 || DefaultShare(1e6) != 0.1 {
		t.Errorf("default shares %v %v %v", DefaultShare(0.1), DefaultShare(1), DefaultShare(1e6))
	}
	p2, p3 := Phase{Name: "II", Steps: 10, Clip: 1, LR: 1}, Phase{Name: "III", Steps: 10, Clip: 1, LR: 1}
	if _, err := Plan(1, 1e-5, 1, 100, &p2, &p3, accounting.AccountantAuto); err == nil {
		t.Error("share 1 with Phase III steps accepted")
	}
}

// TestCheckpointResumes: a phase stopped after 3 steps, checkpointed,
// loaded and continued ends where an uninterrupted run does (no noise,
// full batch: deterministic), momentum included.
func TestCheckpointResumes(t *testing.T) {
	g, params := openTestGraph(t, "mlp")
	d := testData(g, 20, 3, 3)
	p := Phase{Name: "III", Steps: 6, Clip: 0.5, Sigma: 1, LR: 0.3, Momentum: 0.9}
	whole := &State{Params: clone(params)}
	if err := p.Run(context.Background(), g, d, whole, RunOptions{Noise: zeroNoise{}}); err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/ckpt"
	stop := errors.New("stop")
	part := &State{Params: clone(params)}
	err := p.Run(context.Background(), g, d, part, RunOptions{Noise: zeroNoise{}, AfterStep: func(s *State, norm float64) error {
		if math.IsNaN(norm) || norm <= 0 {
			t.Errorf("step %d: noisy gradient norm %v", s.Step, norm)
		}
		if s.Step == 3 {
			if err := SaveCheckpoint(path, g, Checkpoint{Phase: 3, State: *s, Settings: "s"}); err != nil {
				return err
			}
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) {
		t.Fatalf("run: %v", err)
	}
	ck, err := LoadCheckpoint(path, g)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Phase != 3 || ck.State.Step != 3 || ck.Settings != "s" {
		t.Fatalf("checkpoint %d %d %q", ck.Phase, ck.State.Step, ck.Settings)
	}
	if err := p.Run(context.Background(), g, d, &ck.State, RunOptions{Noise: zeroNoise{}}); err != nil {
		t.Fatal(err)
	}
	for i := range whole.Params {
		for k := range whole.Params[i] {
			if whole.Params[i][k] != ck.State.Params[i][k] {
				t.Fatalf("resumed %s[%d] = %v, uninterrupted %v", g.Params[i].Name, k, ck.State.Params[i][k], whole.Params[i][k])
			}
		}
	}
	// Accuracy runs the graph once per class.
	acc, err := Accuracy(g, whole.Params, d, 3, 7)
	if err != nil || acc < 0 || acc > 1 {
		t.Errorf("accuracy %v, %v", acc, err)
	}
}

// TestNonFiniteExampleCountsAsZero: one example whose input is NaN made
// every parameter NaN (#15 item 12). Its gradient now counts as zero — a
// per-example map, so the sensitivity stands — and the step equals the
// step on the other examples alone.
func TestNonFiniteExampleCountsAsZero(t *testing.T) {
	g, params := openTestGraph(t, "mlp")
	d := testData(g, 9, 3, 4)
	bad := testData(g, 10, 3, 4)
	copy(bad.Images, d.Images)
	copy(bad.Labels, d.Labels)
	for i := 9 * g.ImageSize(); i < 10*g.ImageSize(); i++ {
		bad.Images[i] = float32(math.NaN())
	}
	p := Phase{Name: "II", Steps: 1, Clip: 0.5, Sigma: 1, LR: 0.3}
	good, poisoned := &State{Params: clone(params)}, &State{Params: clone(params)}
	if err := p.Run(context.Background(), g, d, good, RunOptions{Noise: zeroNoise{}}); err != nil {
		t.Fatal(err)
	}
	// The step divides by the (public) number of examples: rescale.
	if err := p.Run(context.Background(), g, bad, poisoned, RunOptions{Noise: zeroNoise{}}); err != nil {
		t.Fatal(err)
	}
	for i := range params {
		for k := range params[i] {
			w, got := params[i][k], poisoned.Params[i][k]
			if math.IsNaN(float64(got)) || math.IsInf(float64(got), 0) {
				t.Fatalf("parameter %d[%d] is %v after a step with a NaN example", i, k, got)
			}
			want := w + (good.Params[i][k]-w)*9/10
			if math.Abs(float64(got-want)) > 1e-5 {
				t.Fatalf("parameter %d[%d]: %v, want %v (the other examples' step)", i, k, got, want)
			}
		}
	}
}

// TestGraphsHaveIndependentExamples: the test graphs pass the check that
// runs before every phase.
func TestGraphsHaveIndependentExamples(t *testing.T) {
	for _, name := range []string{"mlp", "cnn"} {
		g, params := openTestGraph(t, name)
		if err := g.CheckIndependent(params); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestCoupledGraphIsRefused: a graph whose per-example gradients depend on
// the other examples of the batch (testdata/training/coupled.onnx, made
// by models/export_coupled_test_graph.py: x − batch mean, as batch
// normalisation in training mode) is refused before any step.
func TestCoupledGraphIsRefused(t *testing.T) {
	orttest.Need(t)
	g, err := OpenGraph(filepath.Join("..", "testdata", "training", "coupled.onnx"), GraphOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	params := [][]float32{{0.5, -0.25}}
	err = g.CheckIndependent(params)
	if err == nil || !strings.Contains(err.Error(), "must be independent") {
		t.Fatalf("coupled graph: %v", err)
	}
	d := Data{Images: make([]float32, 8), Labels: make([]int64, 4), N: 4}
	st := &State{Params: params}
	p := Phase{Name: "III", Steps: 1, Clip: 1, Sigma: 1, LR: 0.1}
	if err := p.Run(context.Background(), g, d, st, RunOptions{Noise: zeroNoise{}}); err == nil || st.Step != 0 {
		t.Errorf("a phase ran on a coupled graph: %v, step %d", err, st.Step)
	}
}

// TestFinetuneRefusesNonFinite (#16 item 4): NaN hyperparameters and
// parameters are refused before training, a step that makes a parameter
// non-finite stops the phase with an error (nothing NaN is written), and a
// graph that cannot represent the data's last class is refused.
func TestFinetuneRefusesNonFinite(t *testing.T) {
	g, params := openTestGraph(t, "mlp")
	d := testData(g, 10, 3, 6)
	for _, p := range []Phase{
		{Name: "III", Steps: 1, Clip: 1, Sigma: 1, LR: math.NaN()},
		{Name: "III", Steps: 1, Clip: math.Inf(1), Sigma: 1, LR: 0.1},
		{Name: "III", Steps: 1, Clip: 1, Sigma: 1, LR: 0.1, Momentum: math.NaN()},
	} {
		if err := p.Run(context.Background(), g, d, &State{Params: clone(params)}, RunOptions{Noise: zeroNoise{}}); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
	huge := Phase{Name: "III", Steps: 3, Clip: 1, Sigma: 1, LR: 1e39}
	st := &State{Params: clone(params)}
	if err := huge.Run(context.Background(), g, d, st, RunOptions{Noise: accounting.SeededNoise(1)}); err == nil || !strings.Contains(err.Error(), "became") {
		t.Errorf("a diverging run: %v", err)
	}
	if err := g.CheckLabels(params, 3); err != nil {
		t.Errorf("3 classes: %v", err)
	}
	if err := g.CheckLabels(params, 50); err == nil {
		t.Error("a 3-output graph accepted 50 classes")
	}
}

// TestSeededResumeIsExact (#16 item 13): a seeded run stopped after step 3
// and resumed from its checkpoint — parameters, momentum and the noise
// stream's state — ends bit for bit where the uninterrupted run ends.
func TestSeededResumeIsExact(t *testing.T) {
	g, params := openTestGraph(t, "mlp")
	d := testData(g, 30, 3, 8)
	p := Phase{Name: "III", Steps: 6, Clip: 0.5, Sigma: 1, LR: 0.2, Momentum: 0.9, Batch: 10}
	whole := &State{Params: clone(params)}
	if err := p.Run(context.Background(), g, d, whole, RunOptions{Noise: accounting.SeededNoise(5)}); err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/ckpt"
	noise := accounting.SeededNoise(5)
	stop := errors.New("stop")
	part := &State{Params: clone(params)}
	err := p.Run(context.Background(), g, d, part, RunOptions{Noise: noise, AfterStep: func(s *State, _ float64) error {
		if s.Step == 3 {
			state, err := accounting.NoiseState(noise)
			if err != nil {
				return err
			}
			if err := SaveCheckpoint(path, g, Checkpoint{Phase: 3, State: *s, Settings: "s", Noise: state}); err != nil {
				return err
			}
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) {
		t.Fatal(err)
	}
	ck, err := LoadCheckpoint(path, g)
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := accounting.RestoreNoise(ck.Noise)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background(), g, d, &ck.State, RunOptions{Noise: resumed}); err != nil {
		t.Fatal(err)
	}
	for i := range whole.Params {
		for k := range whole.Params[i] {
			if whole.Params[i][k] != ck.State.Params[i][k] {
				t.Fatalf("parameter %d[%d]: resumed %v, uninterrupted %v", i, k, ck.State.Params[i][k], whole.Params[i][k])
			}
		}
	}
	if _, err := accounting.NoiseState(accounting.SecureNoise()); err == nil {
		t.Error("a secure source's key was exported")
	}
}

// scaledViews is a ViewMaker for tests: row r of example e is its image
// scaled by 1 + r/2 and shifted by the step.
type scaledViews struct {
	d    Data
	size int
	rows int
}

func (v scaledViews) Rows() int { return v.rows }
func (v scaledViews) Fill(e, step int, y int64, out []float32, labels []int64, weights []float64) error {
	for r := range v.rows {
		// the last row: another label, weighing half
		labels[r], weights[r] = y, 1
		if r == v.rows-1 {
			labels[r], weights[r] = (y+1)%3, 0.5
		}
		for k, x := range v.d.Images[e*v.size : (e+1)*v.size] {
			out[r*v.size+k] = x*(1+float32(r)/2) + float32(step)/10
		}
	}
	return nil
}

// TestPhaseClipsTheMeanOverViews (#22): with several rows per example, one
// noiseless full-batch step moves the parameters by minus the mean over
// examples of clip_C(Σ_r w_r·∇ℓ_r / Σ_r w_r) (a last row with another
// label at half weight, as a mixup's soft label), formed naively here from the graph's
// per-row gradients — with the clip binding and not (where the mean, not
// the sum, must come out); examples are never split across graph calls
// (chunk 8 rows: two examples of 3 rows per call).
func TestPhaseClipsTheMeanOverViews(t *testing.T) {
	for _, clip := range []float64{0.05, 100} {
		meanOverViews(t, clip)
	}
}

func meanOverViews(t *testing.T, clip float64) {
	g, params := openTestGraph(t, "mlp")
	d := testData(g, 23, 3, 4)
	const rows = 3
	views := scaledViews{d: d, size: g.ImageSize(), rows: rows}
	st := &State{Params: clone(params)}
	p := Phase{Name: "test", Steps: 1, Clip: clip, Sigma: 1, LR: 1, Views: views}
	if err := p.Run(context.Background(), g, d, st, RunOptions{Noise: zeroNoise{}, Chunk: 8}); err != nil {
		t.Fatal(err)
	}
	imgs := make([]float32, d.N*rows*g.ImageSize())
	labs := make([]int64, d.N*rows)
	weights := make([]float64, d.N*rows)
	for e := 0; e < d.N; e++ {
		views.Fill(e, 0, d.Labels[e], imgs[e*rows*g.ImageSize():], labs[e*rows:], weights[e*rows:])
	}
	grads := make([][]float32, len(g.Params))
	for i, pr := range g.Params {
		grads[i] = make([]float32, d.N*rows*pr.Size)
	}
	if err := g.Run(params, imgs, labs, d.N*rows, grads, make([]float32, d.N*rows)); err != nil {
		t.Fatal(err)
	}
	want := clone(params)
	bound := 0
	for e := 0; e < d.N; e++ {
		mean := make([][]float64, len(g.Params))
		var ss float64
		for i, pr := range g.Params {
			mean[i] = make([]float64, pr.Size)
			for r := e * rows; r < (e+1)*rows; r++ {
				for k, v := range grads[i][r*pr.Size : (r+1)*pr.Size] {
					mean[i][k] += weights[r] * float64(v) / 2.5 // weights 1, 1, 0.5
				}
			}
			for _, v := range mean[i] {
				ss += v * v
			}
		}
		f := math.Min(1, clip*clipMargin/math.Sqrt(ss))
		if f < 1 {
			bound++
		}
		for i := range g.Params {
			for k, v := range mean[i] {
				want[i][k] -= float32(f * v / float64(d.N))
			}
		}
	}
	if (clip < 1) != (bound >= d.N/2) || (clip > 1 && bound > 0) {
		t.Fatalf("clip %v bound %d of %d examples; the test wants it to bind for most or none", clip, bound, d.N)
	}
	for i := range want {
		for k := range want[i] {
			if math.Abs(float64(st.Params[i][k]-want[i][k])) > 1e-6 {
				t.Fatalf("%s[%d] = %v, naive %v", g.Params[i].Name, k, st.Params[i][k], want[i][k])
			}
		}
	}
}
