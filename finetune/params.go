package finetune

import (
	"fmt"
	"os"
	"slices"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

// LoadParams reads a graph's parameters from a safetensors file (F32),
// in the graph's order, checking every name and shape; the file holds
// nothing else.
func LoadParams(path string, g *Graph) ([][]float32, error) {
	out, _, _, err := ReadParams(path, g.Params, false)
	return out, err
}

// ReadParams reads the given parameters from a safetensors file (F32), in
// their order, checking every name and shape and that the values are
// finite; unless others, the file must hold nothing else. It also returns
// every tensor of the file by name, and its metadata.
func ReadParams(path string, params []Param, others bool) ([][]float32, map[string]models.Tensor, map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	ts, md, err := models.DecodeSafetensors(b)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	out := make([][]float32, len(params))
	for i, p := range params {
		t, ok := ts[p.Name]
		if !ok {
			return nil, nil, nil, fmt.Errorf("read %s: no tensor %q (the graph's parameter)", path, p.Name)
		}
		if !slices.Equal(t.Shape, p.Shape) {
			return nil, nil, nil, fmt.Errorf("read %s: tensor %q has shape %v; the graph wants %v", path, p.Name, t.Shape, p.Shape)
		}
		if k := features.FirstNonFinite(t.Data); k >= 0 {
			return nil, nil, nil, fmt.Errorf("read %s: tensor %q holds %v at index %d; parameters must be finite", path, p.Name, t.Data[k], k)
		}
		out[i] = t.Data
	}
	if !others && len(ts) != len(params) {
		for name := range ts {
			if !slices.ContainsFunc(params, func(p Param) bool { return p.Name == name }) {
				return nil, nil, nil, fmt.Errorf("read %s: tensor %q is not a parameter of the graph", path, name)
			}
		}
	}
	return out, ts, md, nil
}
