//go:build cgo

package pretrain

import (
	"fmt"
	"slices"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/finetune"
)

type session = *ort.DynamicAdvancedSession

// Open opens the embedding and vector–Jacobian product graphs, checking
// them against the contract and against each other (the same parameters,
// image shape and embedding width).
func Open(embedPath, vjpPath string, opt finetune.GraphOptions) (*Graphs, error) {
	if err := encode.InitRuntime(""); err != nil {
		return nil, err
	}
	g := &Graphs{embedPath: embedPath, vjpPath: vjpPath}
	ins, outs, err := ort.GetInputOutputInfo(embedPath)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", embedPath, err)
	}
	params, other, err := finetune.ParamInputs(embedPath, ins, InputImages)
	if err != nil {
		return nil, err
	}
	if other[InputImages] == nil {
		return nil, fmt.Errorf("%s: an embedding graph has input %q besides the parameters", embedPath, InputImages)
	}
	if g.ImageShape, err = finetune.ImageShape(embedPath, other[InputImages]); err != nil {
		return nil, err
	}
	k := slices.IndexFunc(outs, func(o ort.InputOutputInfo) bool { return o.Name == OutputEmbeddings })
	if k < 0 || len(outs[k].Dimensions) != 2 || outs[k].Dimensions[1] < 1 {
		return nil, fmt.Errorf("%s: no output %q of shape [batch, E]", embedPath, OutputEmbeddings)
	}
	g.Params, g.Dim = params, int(outs[k].Dimensions[1])
	vins, vouts, err := ort.GetInputOutputInfo(vjpPath)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", vjpPath, err)
	}
	vparams, vother, err := finetune.ParamInputs(vjpPath, vins, InputImages, InputGradEmbeddings)
	if err != nil {
		return nil, err
	}
	if !slices.EqualFunc(vparams, params, func(a, b finetune.Param) bool { return a.Name == b.Name && slices.Equal(a.Shape, b.Shape) }) {
		return nil, fmt.Errorf("%s and %s have different parameters: export them together (models/export_training_graph.py --pretrain-layers)", vjpPath, embedPath)
	}
	gi, ge := vother[InputImages], vother[InputGradEmbeddings]
	if gi == nil || ge == nil {
		return nil, fmt.Errorf("%s: a vector–Jacobian product graph has inputs %q and %q besides the parameters", vjpPath, InputImages, InputGradEmbeddings)
	}
	if shape, err := finetune.ImageShape(vjpPath, gi); err != nil || !slices.Equal(shape, g.ImageShape) {
		return nil, fmt.Errorf("%s: its %q differ from %s's %v (%v)", vjpPath, InputImages, embedPath, g.ImageShape, err)
	}
	if len(ge.Dimensions) != 2 || ge.Dimensions[1] != int64(g.Dim) || ge.DataType != ort.TensorElementDataTypeFloat {
		return nil, fmt.Errorf("%s: %q must be float32 [batch, %d] (the embeddings' width)", vjpPath, InputGradEmbeddings, g.Dim)
	}
	var gradNames []string
	for _, p := range params {
		want := finetune.GradPrefix + p.Name
		k := slices.IndexFunc(vouts, func(o ort.InputOutputInfo) bool { return o.Name == want })
		if k < 0 || !slices.Equal([]int64(vouts[k].Dimensions), p.Shape) {
			return nil, fmt.Errorf("%s: no output %q of shape %v (parameter %q's gradient)", vjpPath, want, p.Shape, p.Name)
		}
		gradNames = append(gradNames, want)
	}
	names := make([]string, 0, len(params)+2)
	for _, p := range params {
		names = append(names, p.Name)
	}
	so, err := finetune.NewSessionOptions(opt, &g.Provider, &g.Note)
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	if g.embed, err = ort.NewDynamicAdvancedSession(embedPath, append(slices.Clone(names), InputImages), []string{OutputEmbeddings}, so); err != nil {
		return nil, fmt.Errorf("open %s: %w", embedPath, err)
	}
	if g.vjp, err = ort.NewDynamicAdvancedSession(vjpPath, append(names, InputImages, InputGradEmbeddings), gradNames, so); err != nil {
		g.embed.Destroy()
		return nil, fmt.Errorf("open %s: %w", vjpPath, err)
	}
	return g, nil
}

// run evaluates one session on tensors (inputs, then outputs).
func run(s session, path string, in, out []tensor) error {
	var values []ort.Value
	defer func() {
		for _, v := range values {
			v.Destroy()
		}
	}()
	for _, t := range append(append([]tensor(nil), in...), out...) {
		v, err := ort.NewTensor(ort.NewShape(t.shape...), t.data)
		if err != nil {
			return err
		}
		values = append(values, v)
	}
	if err := s.Run(values[:len(in)], values[len(in):]); err != nil {
		return fmt.Errorf("run %s: %w", path, err)
	}
	return nil
}

// Embed writes the embeddings (n×Dim) of n images.
func (g *Graphs) Embed(params [][]float32, images []float32, n int, out []float32) error {
	in, err := g.inputs(params, images, n)
	if err != nil {
		return err
	}
	return run(g.embed, g.embedPath, in, []tensor{{[]int64{int64(n), int64(g.Dim)}, out[:n*g.Dim]}})
}

// VJP writes to grads[p] the gradient of Σ_i gradEmb_i·embedding_i of n
// images with respect to parameter p.
func (g *Graphs) VJP(params [][]float32, images, gradEmb []float32, n int, grads [][]float32) error {
	in, err := g.inputs(params, images, n)
	if err != nil {
		return err
	}
	in = append(in, tensor{[]int64{int64(n), int64(g.Dim)}, gradEmb[:n*g.Dim]})
	out := make([]tensor, len(g.Params))
	for i, p := range g.Params {
		out[i] = tensor{p.Shape, grads[i][:p.Size]}
	}
	return run(g.vjp, g.vjpPath, in, out)
}

// Close releases the sessions.
func (g *Graphs) Close() error {
	if g.embed != nil {
		g.embed.Destroy()
	}
	if g.vjp != nil {
		return g.vjp.Destroy()
	}
	return nil
}
