package finetune

import (
	"context"
	"fmt"
	"math"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/interrupt"
)

// clipMargin shrinks the clipping norm a little so that float rounding
// cannot leave a clipped gradient longer than the norm the accounting
// assumes (as the feature-space solvers do).
const clipMargin = 1 - 1e-6

// Data is a training set held as the graph's inputs: N examples of
// ImageSize values each, and their labels; with Pixels and IDs (LoadImages
// keeps them when asked), the decoded images and their ids, from which a
// ViewMaker makes augmented rows.
type Data struct {
	Images []float32
	Labels []int64
	N      int
	Pixels []features.Pixels
	IDs    []string
}

// Phase is one private phase of DP-SGD through a training graph (DP-RandP
// Phase II with only the head trainable, Phase III with all): per step, a
// Poisson sample of the examples (each with probability Batch/N; Batch 0 is
// the full batch), per-example gradients from the graph, clipped jointly
// over the trainable parameters to Clip, summed, with N(0, (Sigma·Clip)²)
// on every coordinate, divided by the expected batch size (a public
// constant), and a step of SGD with momentum.
type Phase struct {
	Name string `json:"name"`
	// Trainable marks the parameters this phase updates (nil: all).
	Trainable []bool  `json:"trainable,omitempty"`
	Steps     int     `json:"steps"`
	Batch     float64 `json:"batch"` // 0: the full batch
	Clip      float64 `json:"clip"`
	Sigma     float64 `json:"noise_multiplier"`
	LR        float64 `json:"lr"`
	Momentum  float64 `json:"momentum"`
	// Views, when set, makes several rows of each sampled example (its
	// augmented views and mixes) whose per-example gradients are averaged
	// before the joint clip; Unit describes them for reports.
	Views ViewMaker `json:"-"`
	Unit  string    `json:"unit,omitempty"`
}

// Mechanisms is the phase's accounting: Steps releases of a clipped
// gradient sum (sensitivity Clip under add/remove) with noise Sigma·Clip,
// Poisson-sampled at Batch/N.
func (p Phase) Mechanisms(n int) []accounting.Mechanism {
	if p.Steps == 0 {
		return nil
	}
	m := accounting.Mechanism{Name: p.Name + ": noisy clipped gradient sum", Kind: accounting.KindGaussian,
		Sensitivity: p.Clip, NoiseStd: p.Sigma * p.Clip, Count: p.Steps}
	if p.Batch > 0 && p.Batch < float64(n) {
		m.SamplingRate = p.Batch / float64(n)
	}
	return []accounting.Mechanism{m}
}

// State is what a phase changes and a checkpoint keeps: the parameters,
// the momentum buffers, and the next step.
type State struct {
	Params   [][]float32
	Velocity [][]float32
	Step     int
}

// RunOptions are a phase run's noise source and callbacks.
type RunOptions struct {
	Noise accounting.Noise
	// Chunk bounds the rows per graph call (memory); 0: 256. An example's
	// rows (Phase.Views) share a call.
	Chunk int
	// Observe sees every noise release (tests check its scale).
	Observe func(release string, std float64, noise []float64)
	// AfterStep is called after each step with the L2 norm of the step's
	// noisy gradient sum (a post-processing of the released values: the
	// exact loss is private and is never reported); an error stops the
	// phase (checkpointing happens here).
	AfterStep func(st *State, noisyNorm float64) error
}

// Run continues phase p from st.Step to p.Steps.
func (p Phase) Run(ctx context.Context, g *Graph, d Data, st *State, o RunOptions) error {
	defer interrupt.Observe()() // a Ctrl-C ends the phase at a step, which the caller saves
	if err := p.check(g, d, o); err != nil {
		return err
	}
	if err := g.CheckIndependent(st.Params); err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	if st.Velocity == nil {
		st.Velocity = make([][]float32, len(g.Params))
		for i, pr := range g.Params {
			st.Velocity[i] = make([]float32, pr.Size)
		}
	}
	chunk := o.Chunk
	if chunk <= 0 {
		chunk = 256
	}
	trainable := p.Trainable
	if trainable == nil {
		trainable = make([]bool, len(g.Params))
		for i := range trainable {
			trainable[i] = true
		}
	}
	trainableSize := 0 // coordinates of one step's release
	for i, pr := range g.Params {
		if trainable[i] {
			trainableSize += pr.Size
		}
	}
	size := g.ImageSize()
	rows := 1 // per example
	if p.Views != nil {
		rows = p.Views.Rows()
	}
	perCall := max(1, chunk/rows) // examples per graph call
	chunk = perCall * rows
	imgs := make([]float32, chunk*size)
	labs := make([]int64, chunk)
	grads := make([][]float32, len(g.Params))
	sums := make([][]float64, len(g.Params))
	mean := make([][]float64, len(g.Params)) // one example's mean gradient (views)
	weights := make([]float64, chunk)
	for i, pr := range g.Params {
		grads[i] = make([]float32, chunk*pr.Size)
		if trainable[i] {
			sums[i] = make([]float64, pr.Size)
			if rows > 1 {
				mean[i] = make([]float64, pr.Size)
			}
		}
	}
	loss := make([]float32, chunk)
	q := 1.0
	if p.Batch > 0 && p.Batch < float64(d.N) {
		q = p.Batch / float64(d.N)
	}
	denom := q * float64(d.N) // the expected batch size: public
	lim := p.Clip * clipMargin
	for st.Step < p.Steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, s := range sums {
			clear(s)
		}
		flush := func(k int) error {
			if k == 0 {
				return nil
			}
			if err := g.Run(st.Params, imgs, labs, k*rows, grads, loss); err != nil {
				return err
			}
			if rows > 1 {
				addViews(g, grads, trainable, mean, sums, weights, k, rows, lim)
				return nil
			}
			for e := 0; e < k; e++ {
				var ss float64
				for i, pr := range g.Params {
					if trainable[i] {
						for _, v := range grads[i][e*pr.Size : (e+1)*pr.Size] {
							ss += float64(v) * float64(v)
						}
					}
				}
				f := clipFactor(ss, lim)
				if f == 0 {
					continue
				}
				for i, pr := range g.Params {
					if trainable[i] {
						s := sums[i]
						for k, v := range grads[i][e*pr.Size : (e+1)*pr.Size] {
							s[k] += f * float64(v)
						}
					}
				}
			}
			return nil
		}
		k := 0
		for e := 0; e < d.N; e++ {
			if q < 1 && !accounting.Bernoulli(o.Noise, q) { // exactly q
				continue
			}
			if rows > 1 {
				at := k * rows
				if err := p.Views.Fill(e, st.Step, d.Labels[e], imgs[at*size:(at+rows)*size], labs[at:at+rows], weights[at:at+rows]); err != nil {
					return fmt.Errorf("%s step %d: %w", p.Name, st.Step+1, err)
				}
			} else {
				copy(imgs[k*size:(k+1)*size], d.Images[e*size:(e+1)*size])
				labs[k] = d.Labels[e]
			}
			if k++; k == perCall {
				if err := flush(k); err != nil {
					return err
				}
				k = 0
			}
		}
		if err := flush(k); err != nil {
			return err
		}
		var noisySS float64
		for i, pr := range g.Params {
			if !trainable[i] {
				continue
			}
			var before []float64
			if o.Observe != nil {
				before = append(before, sums[i]...)
			}
			// The parameters' noisy sums are one release of sensitivity C
			// over all trainable parameters; each parameter's block is
			// released with the lattice's rounding counted over the whole.
			// SumSlack: the float64 sum over up to n examples, rounded.
			f := accounting.SumSlack(d.N)
			std := accounting.AddGaussianPart(o.Noise, sums[i], p.Sigma*p.Clip*f, p.Clip*f, trainableSize)
			if o.Observe != nil {
				noise := make([]float64, pr.Size)
				for k := range noise {
					noise[k] = sums[i][k] - before[k]
				}
				o.Observe(p.Name+": gradient "+pr.Name, std, noise)
			}
			w, v := st.Params[i], st.Velocity[i]
			for k := range w {
				released := sums[i][k]
				noisySS += released * released
				gk := released / denom
				v[k] = float32(p.Momentum*float64(v[k]) + gk)
				w[k] -= float32(p.LR * float64(v[k]))
			}
		}
		for i := range st.Params {
			if k := features.FirstNonFinite(st.Params[i]); k >= 0 {
				return fmt.Errorf("%s step %d: parameter %q became %v (index %d): lower --lr or check the graph", p.Name, st.Step+1, g.Params[i].Name, st.Params[i][k], k)
			}
		}
		st.Step++
		if o.AfterStep != nil {
			if err := o.AfterStep(st, math.Sqrt(noisySS)); err != nil {
				return err
			}
		}
	}
	return nil
}

// clipFactor is the factor that clips a per-example gradient of squared
// norm ss to lim. A non-finite gradient (NaN or ±Inf anywhere) counts as
// zero: a per-example map, so the sensitivity stands, and one bad example
// cannot turn the whole sum (and the model) into NaN.
func clipFactor(ss, lim float64) float64 {
	switch n := math.Sqrt(ss); {
	case n > lim:
		return lim / n
	case n <= lim:
		return 1
	}
	return 0
}

// addViews adds to sums the clipped mean gradients of k examples of rows
// rows each (consecutive in grads, with weights): each example's per-row
// gradients over the trainable parameters are averaged with its rows'
// weights, then clipped jointly to lim (clipFactor).
func addViews(g *Graph, grads [][]float32, trainable []bool, mean [][]float64, sums [][]float64, weights []float64, k, rows int, lim float64) {
	for e := 0; e < k; e++ {
		var total float64
		for _, w := range weights[e*rows : (e+1)*rows] {
			total += w
		}
		var ss float64
		for i, pr := range g.Params {
			if !trainable[i] {
				continue
			}
			m := mean[i]
			clear(m)
			for r := e * rows; r < (e+1)*rows; r++ {
				w := weights[r] / total
				for j, v := range grads[i][r*pr.Size : (r+1)*pr.Size] {
					m[j] += w * float64(v)
				}
			}
			for _, v := range m {
				ss += v * v
			}
		}
		f := clipFactor(ss, lim)
		if f == 0 {
			continue
		}
		for i := range g.Params {
			if trainable[i] {
				for j, v := range mean[i] {
					sums[i][j] += f * v
				}
			}
		}
	}
}

func (p Phase) check(g *Graph, d Data, o RunOptions) error {
	switch {
	case o.Noise == nil:
		return fmt.Errorf("%s: no noise source", p.Name)
	// NaN-safe: every comparison is written so that NaN fails it.
	case p.Steps < 0 || !(p.Clip > 0) || !(p.Sigma > 0) || !(p.LR > 0) || !(p.Momentum >= 0 && p.Momentum < 1) || !(p.Batch >= 0) ||
		math.IsInf(p.Clip, 0) || math.IsInf(p.Sigma, 0) || math.IsInf(p.LR, 0) || math.IsInf(p.Batch, 0):
		return fmt.Errorf("%s: steps ≥ 0, finite clip, sigma, lr > 0, momentum in [0, 1) and batch ≥ 0 needed, got %+v", p.Name, p)
	case d.N < 1 || len(d.Images) != d.N*g.ImageSize() || len(d.Labels) != d.N:
		return fmt.Errorf("%s: %d examples with %d values and %d labels; the graph wants %d values each", p.Name, d.N, len(d.Images), len(d.Labels), g.ImageSize())
	case p.Trainable != nil && len(p.Trainable) != len(g.Params):
		return fmt.Errorf("%s: %d trainable flags for %d parameters", p.Name, len(p.Trainable), len(g.Params))
	}
	return nil
}
