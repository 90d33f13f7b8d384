package finetune

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
	path       string
	session    session
}

// ImageSize is the number of values of one example.
func (g *Graph) ImageSize() int {
	n := 1
	for _, d := range g.ImageShape {
		n *= int(d)
	}
	return n
}
