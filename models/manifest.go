package models

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dpfeat/dpfeat/internal/filehash"
)

// Manifest says how to feed an encoder exported to ONNX and how to read its
// features. It lives next to the .onnx file as a JSON file of the same name
// (ENC.json for ENC.onnx); ../shared/encoders/*.json are examples.
type Manifest struct {
	Name string `json:"name"`
	// File is the ONNX file, relative to the manifest.
	File string `json:"file,omitempty"`
	// SHA256 of the ONNX file; checked when set.
	SHA256 string `json:"sha256,omitempty"`
	Input  Input  `json:"input"`
	Output Output `json:"output"`
	// Basis, optional, names features this encoder's author declares
	// public — its own training data, extracted with dpfeat — whose
	// principal directions `fit --method auto` takes for its transform
	// at small n·μ (solvers.TransformSpec.Basis). extract records it in
	// the features it makes, so auto finds it without a flag.
	Basis *Basis `json:"basis,omitempty"`

	// Informational fields, kept as they are.
	PretrainedOn           string   `json:"pretrained_on,omitempty"`
	PublicHeadTestAccuracy *float64 `json:"public_head_test_accuracy,omitempty"`
	Architecture           string   `json:"architecture,omitempty"`
	Training               string   `json:"training,omitempty"`
	Description            string   `json:"description,omitempty"`
	License                string   `json:"license,omitempty"`
	Source                 string   `json:"source,omitempty"`
}

// Basis is a manifest's public basis features.
type Basis struct {
	// File is a dpfeat feature file of this encoder, relative to the
	// manifest.
	File string `json:"file"`
	// SHA256 of File; checked when set.
	SHA256 string `json:"sha256,omitempty"`
	// Source says what the images are (informational), e.g. "Fashion-MNIST
	// train rows 0–29999, the encoder's training data".
	Source string `json:"source,omitempty"`
}

// BasisPath is the basis file's path given the manifest's own (relative
// to the manifest's folder unless absolute); "" without a basis.
func (m *Manifest) BasisPath(manifestPath string) string {
	if m.Basis == nil {
		return ""
	}
	if filepath.IsAbs(m.Basis.File) {
		return m.Basis.File
	}
	return filepath.Join(filepath.Dir(manifestPath), m.Basis.File)
}

// Input describes the model's image input and the preprocessing that
// produces it: decode → (grey → RGB if Channels is 3) → resize (and crop) to
// Height×Width → × Scale → (x − Mean[c]) / Std[c] → Layout.
type Input struct {
	// Name of the model input; empty means the model's only input.
	Name string `json:"name,omitempty"`
	// Layout is NCHW (PyTorch exports) or NHWC (TensorFlow/JAX exports).
	Layout   string `json:"layout"`
	Channels int    `json:"channels"`
	Height   int    `json:"height"`
	Width    int    `json:"width"`
	// Scale multiplies raw 0–255 pixel values; 1/255 if unset.
	Scale float64   `json:"scale,omitempty"`
	Mean  []float64 `json:"mean,omitempty"`
	Std   []float64 `json:"std,omitempty"`
	// Resize is the interpolation: bilinear (default), bicubic or nearest.
	// Downscaling is antialiased the way PIL and torchvision (antialias=True)
	// do it; upscaling with bilinear equals torch's interpolate with
	// align_corners=False.
	Resize string `json:"resize,omitempty"`
	// Crop is "none" (resize straight to Height×Width, the default) or
	// "center": resize the shorter side to ResizeSize (default
	// floor(Height / CropPct)) keeping the aspect ratio, then take the
	// central Height×Width, as timm and torchvision eval transforms do.
	Crop       string  `json:"crop,omitempty"`
	ResizeSize int     `json:"resize_size,omitempty"`
	CropPct    float64 `json:"crop_pct,omitempty"`
	// RoundAfterResize rounds resized pixels to 8-bit integers, as a
	// PIL-based pipeline (torchvision/timm on PIL images) does; false keeps
	// floats, as a tensor pipeline does.
	RoundAfterResize bool `json:"round_after_resize,omitempty"`
	// DType is the input element type: float32 (default) or float16.
	DType string `json:"dtype,omitempty"`
}

// Output describes which model output holds the features and how to pool
// it to one vector per image.
type Output struct {
	// Name of the model output; empty means the model's first output.
	Name string `json:"name,omitempty"`
	// Dim is the feature dimension D; checked against the model when set.
	Dim int `json:"dim,omitempty"`
	// Pool: none ([N, D], already pooled), cls ([N, T, D] → token 0),
	// mean ([N, T, D] → mean of all tokens), mean_patch ([N, T, D] → mean
	// of tokens 1..T−1, leaving out a CLS token), gap ([N, C, H, W] →
	// global average pool over H, W).
	Pool string `json:"pool,omitempty"`
}

// Pooling names.
const (
	PoolNone      = "none"
	PoolCLS       = "cls"
	PoolMean      = "mean"
	PoolMeanPatch = "mean_patch"
	PoolGAP       = "gap"
)

// LoadManifest reads a manifest file. Unknown keys are an error (a typo
// would otherwise be silently ignored), and so is any inconsistency.
func LoadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", path, err)
	}
	m, err := ParseManifest(b)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	return m, nil
}

// ParseManifest parses and checks a manifest.
func ParseManifest(b []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, explainJSON(err)
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON object")
	}
	if err := m.Normalize(); err != nil {
		return nil, err
	}
	return &m, nil
}

// explainJSON turns encoding/json's errors into messages that name the key.
func explainJSON(err error) error {
	s := err.Error()
	if strings.HasPrefix(s, "json: unknown field ") {
		field := strings.TrimPrefix(s, "json: unknown field ")
		return fmt.Errorf("unknown key %s; known keys: %s", field, strings.Join(knownKeys(), ", "))
	}
	var te *json.UnmarshalTypeError
	if ok := asTypeError(err, &te); ok {
		return fmt.Errorf("key %q: expected %s, got a JSON %s", te.Field, te.Type, te.Value)
	}
	return fmt.Errorf("not valid JSON: %v", err)
}

func asTypeError(err error, te **json.UnmarshalTypeError) bool {
	t, ok := err.(*json.UnmarshalTypeError)
	if ok {
		*te = t
	}
	return ok
}

func knownKeys() []string {
	keys := []string{"name", "file", "sha256", "input", "output", "pretrained_on", "public_head_test_accuracy",
		"architecture", "training", "description", "license", "source", "basis", "basis.file", "basis.sha256", "basis.source",
		"input.name", "input.layout", "input.channels", "input.height", "input.width", "input.scale", "input.mean",
		"input.std", "input.resize", "input.crop", "input.resize_size", "input.crop_pct", "input.round_after_resize",
		"input.dtype", "output.name", "output.dim", "output.pool"}
	sort.Strings(keys)
	return keys
}

// Normalize fills defaults and checks the manifest.
func (m *Manifest) Normalize() error {
	in := &m.Input
	in.Layout = strings.ToUpper(in.Layout)
	if in.Layout == "" {
		in.Layout = "NCHW"
	}
	if in.Layout != "NCHW" && in.Layout != "NHWC" {
		return fmt.Errorf("input.layout %q: expected NCHW or NHWC", m.Input.Layout)
	}
	if in.Channels != 1 && in.Channels != 3 {
		return fmt.Errorf("input.channels %d: expected 1 (grey) or 3 (RGB)", in.Channels)
	}
	if in.Height < 1 || in.Width < 1 || in.Height > 8192 || in.Width > 8192 {
		return fmt.Errorf("input.height×input.width %d×%d: expected 1 to 8192 each", in.Height, in.Width)
	}
	if in.Scale == 0 {
		in.Scale = 1.0 / 255
	}
	if !(in.Scale > 0) || math.IsInf(in.Scale, 0) {
		return fmt.Errorf("input.scale %v: expected a positive number", in.Scale)
	}
	if in.Mean == nil {
		in.Mean = make([]float64, in.Channels)
	}
	if in.Std == nil {
		in.Std = repeat(1, in.Channels)
	}
	if len(in.Mean) == 1 && in.Channels == 3 {
		in.Mean = repeat(in.Mean[0], 3)
	}
	if len(in.Std) == 1 && in.Channels == 3 {
		in.Std = repeat(in.Std[0], 3)
	}
	if len(in.Mean) != in.Channels || len(in.Std) != in.Channels {
		return fmt.Errorf("input.mean and input.std need %d values (one per channel), got %d and %d", in.Channels, len(in.Mean), len(in.Std))
	}
	for c, s := range in.Std {
		if !(s > 0) || math.IsInf(s, 0) || math.IsNaN(in.Mean[c]) || math.IsInf(in.Mean[c], 0) {
			return fmt.Errorf("input channel %d: std must be positive and mean finite, got mean %v std %v", c, in.Mean[c], s)
		}
	}
	in.Resize = strings.ToLower(in.Resize)
	switch in.Resize {
	case "":
		in.Resize = "bilinear"
	case "bilinear", "bicubic", "nearest":
	default:
		return fmt.Errorf("input.resize %q: expected bilinear, bicubic or nearest", m.Input.Resize)
	}
	in.Crop = strings.ToLower(in.Crop)
	switch in.Crop {
	case "", "none":
		in.Crop = "none"
		if in.ResizeSize != 0 || in.CropPct != 0 {
			return fmt.Errorf("input.resize_size and input.crop_pct apply to crop \"center\" only")
		}
	case "center":
		if in.CropPct == 0 {
			in.CropPct = 0.875
		}
		if !(in.CropPct > 0 && in.CropPct <= 1) {
			return fmt.Errorf("input.crop_pct %v: expected a number in (0, 1]", in.CropPct)
		}
		if in.ResizeSize == 0 {
			in.ResizeSize = int(math.Floor(float64(min(in.Height, in.Width)) / in.CropPct))
		}
		if in.ResizeSize < min(in.Height, in.Width) {
			return fmt.Errorf("input.resize_size %d is smaller than the crop %d×%d", in.ResizeSize, in.Height, in.Width)
		}
	default:
		return fmt.Errorf("input.crop %q: expected none or center", m.Input.Crop)
	}
	in.DType = strings.ToLower(in.DType)
	switch in.DType {
	case "":
		in.DType = "float32"
	case "float32", "float16":
	default:
		return fmt.Errorf("input.dtype %q: expected float32 or float16", m.Input.DType)
	}
	out := &m.Output
	out.Pool = strings.ToLower(out.Pool)
	switch out.Pool {
	case "":
		out.Pool = PoolNone
	case PoolNone, PoolCLS, PoolMean, PoolMeanPatch, PoolGAP:
	default:
		return fmt.Errorf("output.pool %q: expected none, cls, mean, mean_patch or gap", m.Output.Pool)
	}
	if out.Dim < 0 {
		return fmt.Errorf("output.dim %d: expected a positive number", out.Dim)
	}
	if err := checkSHA256("sha256", &m.SHA256); err != nil {
		return err
	}
	if b := m.Basis; b != nil {
		if b.File == "" {
			return fmt.Errorf("basis.file: expected the basis feature file's path, relative to the manifest")
		}
		if err := checkSHA256("basis.sha256", &b.SHA256); err != nil {
			return err
		}
	}
	return nil
}

// checkSHA256 checks an optional hash field and lower-cases it.
func checkSHA256(key string, v *string) error {
	if *v == "" {
		return nil
	}
	if _, err := hex.DecodeString(*v); err != nil || len(*v) != 64 {
		return fmt.Errorf("%s %q: expected 64 hexadecimal digits", key, *v)
	}
	*v = strings.ToLower(*v)
	return nil
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// ManifestFor returns the manifest beside an ONNX file (ENC.json for
// ENC.onnx), or an error naming the file it looked for.
func ManifestFor(onnxPath string) (*Manifest, string, error) {
	p := strings.TrimSuffix(onnxPath, filepath.Ext(onnxPath)) + ".json"
	if _, err := os.Stat(p); err != nil {
		return nil, p, fmt.Errorf("no manifest %s beside %s: pass --manifest, or --preset with the input flags", p, onnxPath)
	}
	m, err := LoadManifest(p)
	return m, p, err
}

// CheckFile verifies the ONNX file's hash against the manifest, when the
// manifest has one, and returns the file's hash.
func (m *Manifest) CheckFile(onnxPath string) (string, error) {
	sum, err := filehash.SHA256(onnxPath)
	if err != nil {
		return "", fmt.Errorf("model %s: %w", onnxPath, err)
	}
	if m.SHA256 != "" && sum != m.SHA256 {
		return "", fmt.Errorf("model %s has sha256 %s, but its manifest says %s: wrong file or wrong manifest", onnxPath, sum, m.SHA256)
	}
	return sum, nil
}
