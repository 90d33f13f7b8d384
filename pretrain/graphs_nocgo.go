//go:build !cgo

package pretrain

import (
	"errors"

	"github.com/dpfeat/dpfeat/finetune"
)

type session = struct{}

var errNoCgo = errors.New("this dpfeat was built without cgo, and ONNX Runtime needs it: rebuild with CGO_ENABLED=1 (and a C compiler) to pretrain")

// Open fails without cgo.
func Open(string, string, finetune.GraphOptions) (*Graphs, error) { return nil, errNoCgo }

// Embed fails without cgo.
func (g *Graphs) Embed([][]float32, []float32, int, []float32) error { return errNoCgo }

// VJP fails without cgo.
func (g *Graphs) VJP([][]float32, []float32, []float32, int, [][]float32) error { return errNoCgo }

// Close does nothing without cgo.
func (g *Graphs) Close() error { return nil }
