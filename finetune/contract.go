package finetune

import (
	"fmt"
	"math"

	"github.com/dpfeat/dpfeat/encode"
)

// The training-graph contract: an ONNX model whose inputs are the trainable
// parameters (float32, fixed shapes, by name), InputImages (float32,
// [batch, …]) and InputLabels (int64, [batch]); and whose outputs are, for
// every parameter P, GradPrefix+P (float32, [batch, P's shape…]: each
// example's gradient of its loss) and OutputLoss (float32, [batch]: each
// example's loss). models/export_training_graph.py writes such graphs.
const (
	InputImages = "images"
	InputLabels = "labels"
	GradPrefix  = "grad."
	OutputLoss  = "loss"
)

// Param is one trainable parameter of a training graph.
type Param struct {
	Name  string
	Shape []int64
	Size  int
}

// Graph is an opened training graph.
type Graph struct {
	// Params are the parameter inputs, in the graph's order.
	Params []Param
	// ImageShape is an example's shape (the images input without its
	// batch axis).
	ImageShape []int64
	// Provider is the execution provider that runs it (cpu, cuda:N);
	// Note says why --device auto fell back to the CPU.
	Provider, Note string
	path           string
	session        session
}

// GraphOptions choose ONNX Runtime's threads (0: its default) and device.
type GraphOptions struct {
	Threads int
	Device  encode.Device
}

// ImageSize is the number of values of one example.
func (g *Graph) ImageSize() int {
	n := 1
	for _, d := range g.ImageShape {
		n *= int(d)
	}
	return n
}

// CheckIndependent verifies that the graph's per-example gradients are
// independent: each example's gradient must not change when another
// example's input does. A graph whose batch couples examples (batch
// normalisation in training mode, a loss averaged over the batch) would
// let one example's influence reach every other clipped gradient, and the
// per-example sensitivity DP-SGD relies on would not hold. The check runs
// on synthetic inputs (seeded, data-independent), so its outcome reveals
// nothing about the private data.
func (g *Graph) CheckIndependent(params [][]float32) error {
	const n = 3
	size := g.ImageSize()
	images := make([]float32, n*size)
	for i := range images {
		// a fixed, irregular pattern in [−1, 1]
		images[i] = float32(math.Sin(float64(i)*0.7071 + 0.3))
	}
	labels := make([]int64, n) // class 0: every graph has it
	run := func(img []float32) ([][]float32, error) {
		grads := make([][]float32, len(g.Params))
		for i, p := range g.Params {
			grads[i] = make([]float32, n*p.Size)
		}
		loss := make([]float32, n)
		if err := g.Run(params, img, labels, n, grads, loss); err != nil {
			return nil, err
		}
		return grads, nil
	}
	a, err := run(images)
	if err != nil {
		return err
	}
	perturbed := append([]float32(nil), images...)
	for i := 0; i < size; i++ {
		perturbed[i] = -perturbed[i] + 0.5 // example 0 only
	}
	b, err := run(perturbed)
	if err != nil {
		return err
	}
	for i, p := range g.Params {
		for e := 1; e < n; e++ {
			for k := e * p.Size; k < (e+1)*p.Size; k++ {
				x, y := float64(a[i][k]), float64(b[i][k])
				if math.Abs(x-y) > 1e-5*(1+math.Abs(x)) {
					return fmt.Errorf("%s: example %d's gradient of %q changed (%g → %g) when only example 0's input did: per-example gradients must be independent (no batch normalisation in training mode, no loss averaged over the batch)", g.path, e, p.Name, x, y)
				}
			}
		}
	}
	return nil
}

// CheckLabels verifies that the graph has an output for every one of the
// dataset's classes labels 0..classes−1. The contract's loss is each
// example's softmax cross-entropy, ℓ(y) = −log p_y, so for one input the
// probabilities exp(−ℓ(y)) of the labels the graph has sum to at most 1;
// a label beyond its outputs (a zero one-hot, or a clamped index) adds
// mass and pushes the sum past 1 — or fails inside ONNX Runtime. One
// synthetic input is evaluated with every label, in chunks.
func (g *Graph) CheckLabels(params [][]float32, classes int) error {
	if classes < 1 {
		return fmt.Errorf("%s: the data has no classes", g.path)
	}
	const chunk = 64
	size := g.ImageSize()
	images := make([]float32, chunk*size)
	for e := 0; e < chunk; e++ {
		for i := 0; i < size; i++ {
			images[e*size+i] = float32(math.Cos(float64(i) * 0.37))
		}
	}
	grads := make([][]float32, len(g.Params))
	for i, p := range g.Params {
		grads[i] = make([]float32, chunk*p.Size)
	}
	loss := make([]float32, chunk)
	labels := make([]int64, chunk)
	bad := func(why string) error {
		return fmt.Errorf("%s cannot train on the data's %d classes (%s): export the graph with %d outputs", g.path, classes, why, classes)
	}
	var mass float64
	for lo := 0; lo < classes; lo += chunk {
		n := min(chunk, classes-lo)
		for e := 0; e < n; e++ {
			labels[e] = int64(lo + e)
		}
		if err := g.Run(params, images, labels, n, grads, loss); err != nil {
			return bad(err.Error())
		}
		for _, l := range loss[:n] {
			if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
				return bad(fmt.Sprintf("loss %v", l))
			}
			mass += math.Exp(-float64(l))
		}
	}
	if mass > 1+1e-3 {
		return bad(fmt.Sprintf("the probabilities of labels 0..%d sum to %.3f > 1", classes-1, mass))
	}
	return nil
}
