package finetune

import (
	"fmt"
	"os"
	"slices"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

// LoadParams reads a graph's parameters from a safetensors file (F32),
// in the graph's order, checking every name and shape.
func LoadParams(path string, g *Graph) ([][]float32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	ts, _, err := models.DecodeSafetensors(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	out := make([][]float32, len(g.Params))
	for i, p := range g.Params {
		t, ok := ts[p.Name]
		if !ok {
			return nil, fmt.Errorf("read %s: no tensor %q (the graph's parameter)", path, p.Name)
		}
		if !slices.Equal(t.Shape, p.Shape) {
			return nil, fmt.Errorf("read %s: tensor %q has shape %v; the graph wants %v", path, p.Name, t.Shape, p.Shape)
		}
		if k := features.FirstNonFinite(t.Data); k >= 0 {
			return nil, fmt.Errorf("read %s: tensor %q holds %v at index %d; parameters must be finite", path, p.Name, t.Data[k], k)
		}
		out[i] = t.Data
	}
	if len(ts) != len(g.Params) {
		for name := range ts {
			if !slices.ContainsFunc(g.Params, func(p Param) bool { return p.Name == name }) {
				return nil, fmt.Errorf("read %s: tensor %q is not a parameter of the graph", path, name)
			}
		}
	}
	return out, nil
}
