package onnxexport

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/dpfeat/dpfeat/models"
)

// The graph's input and output names. A fused model keeps an encoder
// tensor's name where it is already taken, prefixing ours with "dpfeat/".
const (
	InputFeatures = "features"
	InputPixels   = "pixels"
	// InputImages is a fused model's input of any-sized images.
	InputImages  = "images"
	OutputScores = "scores"
	OutputClass  = "class"
	// OutputFeatures is a fused model's pooled encoder features.
	OutputFeatures = "features"
)

// Head returns the classifier alone as an ONNX model: input "features"
// [N, D] float32 (the encoder's features, as a feature file holds them),
// outputs "scores" [N, M] float32 (what dpfeat predict writes) and "class"
// [N] int64 (the index of the highest score, the first of equal ones).
// The classifier's preprocessing is in the graph; its metadata is in the
// model's metadata_props. The head computes in float64, as dpfeat predict
// does (scores agree to float32 rounding, whatever their size), or with
// single in float32, for runtimes without float64 kernels (scores agree
// to ~1e-6 of their size).
func Head(c *models.Classifier, version string, single bool) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	g := &builder{opset: headOpset, prefix: "dpfeat/", single: single}
	x, d := g.preprocess(c.Prep, g.toHead(InputFeatures), c.Dim)
	g.head(c, x, d, OutputScores, OutputClass)
	body := appendString(nil, graphName, "dpfeat-head")
	body = append(body, g.graphBody()...)
	body = appendBytes(body, graphInput, valueInfo{name: InputFeatures, elem: elemFloat, dims: []int64{0, int64(c.Dim)}, param: "N"}.marshal())
	body = appendOutputs(body, c, "", OutputScores, OutputClass)
	b := appendVarint(nil, modelIRVersion, irVersion)
	b = appendBytes(b, modelOpsetImport, appendVarint(appendString(nil, opsetDomain, ""), opsetVersion, headOpset))
	return appendModel(b, c, version, "features", body)
}

// appendModel adds to a ModelProto's other fields dpfeat as its producer,
// a doc string, the graph, and the classifier's metadata.
func appendModel(b []byte, c *models.Classifier, version, input string, graph []byte) ([]byte, error) {
	meta, err := metadata(c, input)
	if err != nil {
		return nil, err
	}
	b = appendString(b, modelProducerName, "dpfeat")
	b = appendString(b, modelProducerVer, version)
	b = appendString(b, modelDocString, docString(c, input))
	b = appendBytes(b, modelGraph, graph)
	return appendMetadata(b, meta), nil
}

// appendOutputs declares the outputs: the pooled features under that
// name when it is not empty, the scores and the class.
func appendOutputs(body []byte, c *models.Classifier, features, scores, class string) []byte {
	if features != "" {
		body = appendBytes(body, graphOutput, valueInfo{name: features, elem: elemFloat, dims: []int64{0, int64(c.Dim)}, param: "N"}.marshal())
	}
	body = appendBytes(body, graphOutput, valueInfo{name: scores, elem: elemFloat, dims: []int64{0, int64(len(c.Classes))}, param: "N"}.marshal())
	return appendBytes(body, graphOutput, valueInfo{name: class, elem: elemInt64, dims: []int64{0}, param: "N"}.marshal())
}

// metadata is the classifier file's metadata under "dpfeat." keys (the
// classes, encoder hash, method, the full privacy statement, the
// preprocessing), and what the input is.
func metadata(c *models.Classifier, input string) (map[string]string, error) {
	md, err := c.Metadata()
	if err != nil {
		return nil, err
	}
	out := map[string]string{"dpfeat.input": input}
	for k, v := range md {
		out["dpfeat."+strings.TrimPrefix(k, "dpfeat.")] = v
	}
	return out, nil
}

func appendMetadata(b []byte, md map[string]string) []byte {
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := appendString(appendString(nil, entryKey, k), entryValue, md[k])
		b = appendBytes(b, modelMetadataProps, e)
	}
	return b
}

func docString(c *models.Classifier, input string) string {
	return fmt.Sprintf("dpfeat %s classifier (%s) over %d classes; input %s; outputs scores (dpfeat predict's) and class (argmax). %s",
		c.Kind, c.Method, len(c.Classes), input, strings.TrimSpace(c.Guarantee.String()))
}

// Takes is what a fused model's input is.
type Takes string

const (
	// TakesImages: "images", pixel values 0–255 as float32 of images of
	// any size (one size per call), [N, C, H, W] or [N, H, W, C] as the
	// manifest's layout and channels say. The manifest's resize, centre
	// crop, scale, mean and std are in the graph. The default.
	TakesImages Takes = "images"
	// TakesPixels: "pixels", pixel values 0–255 as float32 already
	// resized and cropped to the manifest's Height×Width; its scale,
	// mean and std are in the graph.
	TakesPixels Takes = "pixels"
	// TakesEncoderInput: the encoder's own (normalised) input.
	TakesEncoderInput Takes = "encoder"
)

// FuseOptions tunes Fused.
type FuseOptions struct {
	// Input is what the model takes; empty means TakesImages.
	Input Takes
	// Force fuses even when the classifier was fitted on features of
	// another encoder (its encoder.sha256 differs from the model's).
	Force bool
	// Version is dpfeat's, for producer_version.
	Version string
	// Float32 computes the head in float32, for runtimes without float64
	// kernels; by default it runs in float64, as dpfeat predict.
	Float32 bool
}

// Fused returns the encoder and the classifier as one ONNX model: images
// in (the encoder's input, or pixels with FuseOptions.Pixels), the pooled
// features, scores and class out. The encoder's graph, opset and metadata
// are kept as they are; the manifest's pooling, the classifier's
// preprocessing and head are appended in the encoder's opset.
func Fused(c *models.Classifier, encoder []byte, m *models.Manifest, opt FuseOptions) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(encoder)
	if h := hex.EncodeToString(sum[:]); c.EncoderSHA256 != "" && c.EncoderSHA256 != h && !opt.Force {
		return nil, fmt.Errorf("the classifier was fitted on features of encoder %s (sha256 %.12s…), not of this model (sha256 %.12s…); pass --force to fuse anyway", c.EncoderName, c.EncoderSHA256, h)
	}
	if m.Output.Dim > 0 && m.Output.Dim != c.Dim {
		return nil, fmt.Errorf("the encoder gives %d features, the classifier takes %d", m.Output.Dim, c.Dim)
	}
	top, err := fields(encoder)
	if err != nil {
		return nil, fmt.Errorf("not a readable ONNX model: %w", err)
	}
	var graph []byte
	opset := int64(0)
	for _, f := range top {
		switch f.num {
		case modelGraph:
			graph = append(graph, f.body...) // repeated message fields merge
		case modelOpsetImport:
			if d := stringField(f.body, opsetDomain); d == "" || d == "ai.onnx" {
				fs, _ := fields(f.body)
				for _, v := range fs {
					if v.num == opsetVersion {
						opset = int64(v.v)
					}
				}
			}
		}
	}
	if graph == nil {
		return nil, fmt.Errorf("not an ONNX model: no graph")
	}
	if opset < minOpset {
		return nil, fmt.Errorf("the encoder uses opset %d; fusing needs opset %d or later (re-export it, e.g. torch.onnx.export(..., opset_version=17))", opset, minOpset)
	}
	gfs, err := fields(graph)
	if err != nil {
		return nil, fmt.Errorf("not a readable ONNX graph: %w", err)
	}
	taken := map[string]bool{}
	var inputs, outputs []field
	inits := map[string]bool{}
	for _, f := range gfs {
		switch f.num {
		case graphNode:
			for _, s := range stringFields(f.body, nodeOutput) {
				taken[s] = true
			}
		case graphInitializer:
			name := stringField(f.body, tensorName)
			inits[name], taken[name] = true, true
			if isExternal(f.body) {
				return nil, fmt.Errorf("the encoder keeps its weights in an external data file (initializer %q); save it as one file first (onnx.save(onnx.load(path), out, save_as_external_data=False))", name)
			}
		case graphInput:
			taken[stringField(f.body, valueName)] = true
			inputs = append(inputs, f)
		case graphOutput:
			outputs = append(outputs, f)
		}
	}
	in, err := pick(inputs, m.Input.Name, "input", inits)
	if err != nil {
		return nil, err
	}
	out, err := pick(outputs, m.Output.Name, "output", nil)
	if err != nil {
		return nil, err
	}
	fresh := func(name string) string {
		if taken[name] {
			return "dpfeat/" + name
		}
		return name
	}
	g := &builder{opset: opset, prefix: "dpfeat/", single: opt.Float32}
	var body []byte
	inputName := stringField(in.body, valueName)
	takes := opt.Input
	if takes == "" {
		takes = TakesImages
	}
	var pixels string
	switch takes {
	case TakesImages, TakesPixels:
		// Resize and normalisation first: their nodes precede the encoder's.
		pixels = fresh(map[Takes]string{TakesImages: InputImages, TakesPixels: InputPixels}[takes])
		x := pixels
		if takes == TakesImages {
			x = g.resizeLayout(m.Input, x)
		}
		g.normalize(m.Input, x, inputName)
		body = append(body, g.graphBody()...)
		g.nodes, g.inits = nil, nil
	case TakesEncoderInput:
	default:
		return nil, fmt.Errorf("fused model input %q: expected %s, %s or %s", takes, TakesImages, TakesPixels, TakesEncoderInput)
	}
	for _, f := range gfs {
		if f.num == graphOutput || (pixels != "" && f.num == graphInput && stringField(f.body, valueName) == inputName) {
			continue
		}
		body = append(body, f.raw...)
	}
	feats := g.pool(m.Output.Pool, stringField(out.body, valueName), elemTypeOf(out.body))
	featName := feats
	if feats != OutputFeatures { // the encoder's own "features" output is kept under its name
		featName = fresh(OutputFeatures)
		feats = g.opTo(featName, "Identity", []string{feats})
	}
	x, d := g.preprocess(c.Prep, g.toHead(feats), c.Dim)
	scores, class := fresh(OutputScores), fresh(OutputClass)
	g.head(c, x, d, scores, class)
	body = append(body, g.graphBody()...)
	if pixels != "" {
		body = appendBytes(body, graphInput, pixelInput(m.Input, pixels, takes == TakesImages).marshal())
	}
	body = appendOutputs(body, c, featName, scores, class)
	input := inputDoc(m.Input, takes, inputName, pixels)
	var b []byte
	for _, f := range top {
		switch f.num {
		case modelGraph, modelProducerName, modelProducerVer, modelDocString:
		default:
			b = append(b, f.raw...)
		}
	}
	if b, err = appendModel(b, c, opt.Version, input, body); err != nil {
		return nil, err
	}
	if len(b) >= maxProtobufSize {
		return nil, fmt.Errorf("the fused model would be %d bytes; ONNX files are limited to 2 GiB", len(b))
	}
	return b, nil
}

// pick finds the graph input or output named name, or the only one (for
// inputs: the only one that is not an initializer).
func pick(list []field, name, what string, skip map[string]bool) (field, error) {
	var names []string
	var cand []field
	for _, f := range list {
		n := stringField(f.body, valueName)
		if name != "" && n == name {
			return f, nil
		}
		if !skip[n] {
			names, cand = append(names, n), append(cand, f)
		}
	}
	if name != "" {
		return field{}, fmt.Errorf("the manifest names %s %q; the model has %s", what, name, strings.Join(names, ", "))
	}
	if len(cand) == 0 {
		return field{}, fmt.Errorf("the model declares no %s", what)
	}
	if what == "input" && len(cand) > 1 {
		return field{}, fmt.Errorf("the model has %d inputs (%s); name the image input in the manifest's input.name", len(cand), strings.Join(names, ", "))
	}
	return cand[0], nil
}

// isExternal says whether a TensorProto keeps its data in another file.
func isExternal(t []byte) bool {
	fs, _ := fields(t)
	for _, f := range fs {
		if f.num == tensorExternalData || (f.num == tensorDataLocation && f.v == external) {
			return true
		}
	}
	return false
}

// elemTypeOf is a ValueInfoProto's tensor element type (0 if unknown).
func elemTypeOf(vi []byte) int64 {
	fs, _ := fields(vi)
	for _, f := range fs {
		if f.num != valueType {
			continue
		}
		tf, _ := fields(f.body)
		for _, t := range tf {
			if t.num != typeTensor {
				continue
			}
			ef, _ := fields(t.body)
			for _, e := range ef {
				if e.num == tensorElemType && e.typ == protowire.VarintType {
					return int64(e.v)
				}
			}
		}
	}
	return 0
}

// pool adds the manifest's pooling of the encoder output out (one vector
// per image, as encode pools it) and returns the pooled tensor, float32.
func (g *builder) pool(kind, out string, elem int64) string {
	x := out
	if elem != 0 && elem != elemFloat {
		x = g.op("Cast", []string{x}, intAttr("to", elemFloat))
	}
	switch kind {
	case models.PoolCLS:
		return g.op("Gather", []string{x, g.scalarInt("cls", 0)}, intAttr("axis", 1))
	case models.PoolMean:
		return g.reduce("ReduceMean", x, false, 1)
	case models.PoolMeanPatch:
		x = g.op("Slice", []string{x, g.ints("starts", 1), g.ints("ends", 1<<62), g.ints("axes", 1)})
		return g.reduce("ReduceMean", x, false, 1)
	case models.PoolGAP:
		return g.reduce("ReduceMean", x, false, 2, 3)
	}
	return x
}

func (g *builder) scalarInt(hint string, v int64) string {
	t := tensor{name: g.name(hint), i64: []int64{v}}
	g.inits = append(g.inits, t)
	return t.name
}

// normalize adds (pixels·scale − mean)/std per channel, named out (the
// encoder's input), cast to float16 when the encoder takes it.
func (g *builder) normalize(in models.Input, pixels, out string) {
	c := int64(in.Channels)
	shape := []int64{1, c, 1, 1}
	if in.Layout == "NHWC" {
		shape = []int64{1, 1, 1, c}
	}
	mean, std := make([]float32, c), make([]float32, c)
	for i := range mean {
		mean[i], std[i] = float32(in.Mean[i]), float32(in.Std[i])
	}
	x := g.op("Mul", []string{pixels, g.floats32("pixel_scale", nil, []float32{float32(in.Scale)})})
	x = g.op("Sub", []string{x, g.floats32("pixel_mean", shape, mean)})
	if in.DType == "float16" {
		x = g.op("Div", []string{x, g.floats32("pixel_std", shape, std)})
		g.opTo(out, "Cast", []string{x}, intAttr("to", 10))
		return
	}
	g.opTo(out, "Div", []string{x, g.floats32("pixel_std", shape, std)})
}

// pixelInput declares the pixel input: [N, C, H, W] or [N, H, W, C],
// with H and W symbolic ("height", "width") for images of any size.
func pixelInput(in models.Input, name string, anySize bool) valueInfo {
	h, w := int64(in.Height), int64(in.Width)
	if anySize {
		h, w = 0, 0
	}
	dims := []int64{0, int64(in.Channels), h, w}
	syms := []string{"N", "", "height", "width"}
	if in.Layout == "NHWC" {
		dims = []int64{0, h, w, int64(in.Channels)}
		syms = []string{"N", "height", "width", ""}
	}
	return valueInfo{name: name, elem: elemFloat, dims: dims, symbols: syms}
}

// inputDoc says in words what a fused model takes: the doc string's and
// the dpfeat.input metadata's text.
func inputDoc(in models.Input, takes Takes, encoderInput, pixels string) string {
	switch takes {
	case TakesImages:
		crop := fmt.Sprintf("resized to %d×%d", in.Height, in.Width)
		if in.Crop == "center" {
			crop = fmt.Sprintf("the shorter side resized to %d, then the central %d×%d", in.ResizeSize, in.Height, in.Width)
		}
		return fmt.Sprintf("%s: pixel values 0–255 of images of any size (one size per call), %s with %d channel(s), float32; in the graph: %s (%s, antialiased), then scale, mean and std",
			pixels, in.Layout, in.Channels, crop, in.Resize)
	case TakesPixels:
		return fmt.Sprintf("%s: pixel values 0–255 already resized to %d×%d, %s, float32", pixels, in.Height, in.Width, in.Layout)
	}
	return "the encoder's input " + encoderInput
}
