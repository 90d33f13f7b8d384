//go:build cgo

package finetune

import (
	"fmt"
	"slices"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/dpfeat/dpfeat/encode"
)

// OpenGraph opens a training graph (see Graph) with ONNX Runtime, checking
// its inputs and outputs against the contract, on the device opt asks for.
func OpenGraph(path string, opt GraphOptions) (*Graph, error) {
	if err := encode.InitRuntime(""); err != nil {
		return nil, err
	}
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	g := &Graph{path: path}
	params, other, err := ParamInputs(path, ins, InputImages, InputLabels)
	if err != nil {
		return nil, err
	}
	images, labels := other[InputImages], other[InputLabels]
	if images == nil || labels == nil {
		return nil, fmt.Errorf("%s: a training graph has inputs %q and %q besides the parameters (see the README's training-graph contract)", path, InputImages, InputLabels)
	}
	if labels.DataType != ort.TensorElementDataTypeInt64 || len(labels.Dimensions) != 1 {
		return nil, fmt.Errorf("%s: %q must be int64 of shape [batch]", path, InputLabels)
	}
	g.Params = params
	if g.ImageShape, err = ImageShape(path, images); err != nil {
		return nil, err
	}
	var outNames []string
	for _, p := range g.Params {
		want := GradPrefix + p.Name
		k := slices.IndexFunc(outs, func(o ort.InputOutputInfo) bool { return o.Name == want })
		if k < 0 {
			return nil, fmt.Errorf("%s: no output %q (the per-example gradient of parameter %q)", path, want, p.Name)
		}
		o := outs[k]
		if len(o.Dimensions) != len(p.Shape)+1 || !slices.Equal([]int64(o.Dimensions[1:]), p.Shape) {
			return nil, fmt.Errorf("%s: output %q has shape %v; expected [batch %s]", path, want, o.Dimensions, strings.Trim(fmt.Sprint(p.Shape), "[]"))
		}
		outNames = append(outNames, want)
	}
	if !slices.ContainsFunc(outs, func(o ort.InputOutputInfo) bool { return o.Name == OutputLoss && len(o.Dimensions) == 1 }) {
		return nil, fmt.Errorf("%s: no output %q of shape [batch] (the per-example loss)", path, OutputLoss)
	}
	inNames := make([]string, 0, len(g.Params)+2)
	for _, p := range g.Params {
		inNames = append(inNames, p.Name)
	}
	inNames = append(inNames, InputImages, InputLabels)
	so, err := NewSessionOptions(opt, &g.Provider, &g.Note)
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	if g.session, err = ort.NewDynamicAdvancedSession(path, inNames, append(outNames, OutputLoss), so); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return g, nil
}

type session = *ort.DynamicAdvancedSession

// NewSessionOptions makes the ONNX Runtime session options of a graph
// (threads, device) and sets provider and note: the execution provider
// that runs it, and why --device auto fell back to the CPU.
func NewSessionOptions(opt GraphOptions, provider, note *string) (*ort.SessionOptions, error) {
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	if opt.Threads > 0 {
		so.SetIntraOpNumThreads(opt.Threads)
		so.SetInterOpNumThreads(1)
	}
	if *provider, *note, err = encode.ApplyDevice(so, opt.Device); err != nil {
		so.Destroy()
		return nil, err
	}
	return so, nil
}

// ParamInputs splits a graph's inputs into its parameters (every input
// not named in other: float32, fixed shapes, in the graph's order) and the
// named others (nil where the graph lacks one).
func ParamInputs(path string, ins []ort.InputOutputInfo, other ...string) ([]Param, map[string]*ort.InputOutputInfo, error) {
	found := map[string]*ort.InputOutputInfo{}
	for _, o := range other {
		found[o] = nil
	}
	var params []Param
	for i := range ins {
		in := &ins[i]
		if _, ok := found[in.Name]; ok {
			found[in.Name] = in
			continue
		}
		if in.DataType != ort.TensorElementDataTypeFloat {
			return nil, nil, fmt.Errorf("%s: parameter input %q is %v; the contract wants float32", path, in.Name, in.DataType)
		}
		var shape []int64
		size := 1
		for _, d := range in.Dimensions {
			if d < 1 {
				return nil, nil, fmt.Errorf("%s: parameter %q has a dynamic shape %v; parameters need fixed shapes", path, in.Name, in.Dimensions)
			}
			shape = append(shape, d)
			size *= int(d)
		}
		params = append(params, Param{Name: in.Name, Shape: shape, Size: size})
	}
	if len(params) == 0 {
		return nil, nil, fmt.Errorf("%s: no parameter inputs", path)
	}
	return params, found, nil
}

// ImageShape checks an images input (float32, a batch axis and fixed
// dimensions after it) and returns one example's shape.
func ImageShape(path string, images *ort.InputOutputInfo) ([]int64, error) {
	if images.DataType != ort.TensorElementDataTypeFloat || len(images.Dimensions) < 2 {
		return nil, fmt.Errorf("%s: %q must be float32 with a batch axis and at least one more", path, images.Name)
	}
	var shape []int64
	for _, d := range images.Dimensions[1:] {
		if d < 1 {
			return nil, fmt.Errorf("%s: %q has a dynamic shape %v beyond the batch axis", path, images.Name, images.Dimensions)
		}
		shape = append(shape, d)
	}
	return shape, nil
}

// Run evaluates the graph on n examples: params[p] holds parameter p's
// values, images n·ImageSize() values, labels n labels; grads[p] receives
// n·Params[p].Size per-example gradient values and loss n losses.
func (g *Graph) Run(params [][]float32, images []float32, labels []int64, n int, grads [][]float32, loss []float32) error {
	if len(params) != len(g.Params) || len(grads) != len(g.Params) {
		return fmt.Errorf("run %s: %d parameters and %d gradient buffers for %d parameters", g.path, len(params), len(grads), len(g.Params))
	}
	var values []ort.Value
	defer func() {
		for _, v := range values {
			v.Destroy()
		}
	}()
	tensor := func(shape []int64, data []float32) error {
		t, err := ort.NewTensor(ort.NewShape(shape...), data)
		if err == nil {
			values = append(values, t)
		}
		return err
	}
	for i, p := range g.Params {
		if len(params[i]) != p.Size {
			return fmt.Errorf("run %s: parameter %q has %d values; expected %d", g.path, p.Name, len(params[i]), p.Size)
		}
		if err := tensor(p.Shape, params[i]); err != nil {
			return err
		}
	}
	if err := tensor(append([]int64{int64(n)}, g.ImageShape...), images[:n*g.ImageSize()]); err != nil {
		return err
	}
	lt, err := ort.NewTensor(ort.NewShape(int64(n)), labels[:n])
	if err != nil {
		return err
	}
	values = append(values, lt)
	nin := len(values)
	for i, p := range g.Params {
		if err := tensor(append([]int64{int64(n)}, p.Shape...), grads[i][:n*p.Size]); err != nil {
			return err
		}
	}
	if err := tensor([]int64{int64(n)}, loss[:n]); err != nil {
		return err
	}
	if err := g.session.Run(values[:nin], values[nin:]); err != nil {
		return fmt.Errorf("run %s: %w", g.path, err)
	}
	return nil
}

// Close releases the session.
func (g *Graph) Close() error {
	if g.session != nil {
		return g.session.Destroy()
	}
	return nil
}
