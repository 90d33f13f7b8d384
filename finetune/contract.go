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
