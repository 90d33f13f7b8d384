package finetune

import "github.com/dpfeat/dpfeat/encode"

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
