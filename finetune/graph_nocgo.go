//go:build !cgo

package finetune

import "errors"

type session = struct{}

var errNoCgo = errors.New("this dpfeat was built without cgo, and ONNX Runtime needs it: rebuild with CGO_ENABLED=1 (and a C compiler) to fine-tune")

// OpenGraph fails without cgo.
func OpenGraph(string, GraphOptions) (*Graph, error) { return nil, errNoCgo }

// Run fails without cgo.
func (g *Graph) Run([][]float32, []float32, []int64, int, [][]float32, []float32) error {
	return errNoCgo
}

// Close does nothing without cgo.
func (g *Graph) Close() error { return nil }
