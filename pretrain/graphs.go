package pretrain

import (
	"fmt"

	"github.com/dpfeat/dpfeat/finetune"
)

// The pretraining contract: two ONNX models over the same parameters
// (float32 inputs of fixed shapes, by name, as in the training-graph
// contract). The embedding graph takes the parameters and InputImages
// (float32 [batch, …]) and returns OutputEmbeddings (float32 [batch, E]);
// the vector–Jacobian product graph takes the parameters, InputImages and
// InputGradEmbeddings (float32 [batch, E]: a loss's gradient with respect
// to the embeddings) and returns, for every parameter P,
// finetune.GradPrefix+P (P's shape: the gradient of
// Σ_i grad_embeddings_i·embeddings_i, summed over the batch).
// models/export_training_graph.py --pretrain-layers K writes both.
const (
	InputImages         = finetune.InputImages
	InputGradEmbeddings = "grad_embeddings"
	OutputEmbeddings    = "embeddings"
)

// Graphs are an opened pair of pretraining graphs.
type Graphs struct {
	// Params are the parameters, in the embedding graph's order.
	Params []finetune.Param
	// ImageShape is one image's shape; Dim the embeddings' width.
	ImageShape []int64
	Dim        int
	// Provider runs them (cpu, cuda:N); Note says why --device auto fell
	// back to the CPU.
	Provider, Note string
	embedPath      string
	vjpPath        string
	embed, vjp     session
}

// ImageSize is the number of values of one image.
func (g *Graphs) ImageSize() int {
	n := 1
	for _, d := range g.ImageShape {
		n *= int(d)
	}
	return n
}

// tensor is a shape and its float32 values.
type tensor struct {
	shape []int64
	data  []float32
}

// inputs are the parameters and n images as tensors.
func (g *Graphs) inputs(params [][]float32, images []float32, n int) ([]tensor, error) {
	if len(params) != len(g.Params) {
		return nil, errShape("%d parameters for %d", len(params), len(g.Params))
	}
	in := make([]tensor, 0, len(params)+2)
	for i, p := range g.Params {
		if len(params[i]) != p.Size {
			return nil, errShape("parameter %q has %d values; expected %d", p.Name, len(params[i]), p.Size)
		}
		in = append(in, tensor{p.Shape, params[i]})
	}
	return append(in, tensor{append([]int64{int64(n)}, g.ImageShape...), images[:n*g.ImageSize()]}), nil
}

func errShape(format string, args ...any) error { return fmt.Errorf("pretrain: "+format, args...) }
