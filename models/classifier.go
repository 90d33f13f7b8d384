package models

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/atomicfile"
	"github.com/dpfeat/dpfeat/internal/protodist"
	"github.com/dpfeat/dpfeat/preprocessing"
)

// Classifier is a trained head on encoder features: a linear one-vs-all
// model (scores W·x + b) or, for the prototype methods, class prototypes
// (scores: negative distance). It is stored as a safetensors file: tensors
// plus a JSON header, loadable without dpfeat (safetensors.numpy.load_file in
// Python, for instance), with the preprocessing, class names, encoder hash
// and the full privacy statement in the header's metadata.
type Classifier struct {
	// Kind is "linear" or "prototypes".
	Kind    string
	Classes []string
	Dim     int
	// Weight holds Classes×Dim values, row-major (linear), or the class
	// prototypes (prototypes; Classes×K×Dim with K = PerClass).
	Weight []float32
	// Bias holds one value per class (linear).
	Bias []float32
	// PerClass is the number of prototypes per class (prototypes).
	PerClass int
	// Distance is "euclidean" or "cosine" (prototypes).
	Distance string
	Prep     Preprocessing
	// EncoderSHA256 and EncoderName identify the features' encoder.
	EncoderSHA256 string
	EncoderName   string
	Method        string
	// Hyperparameters are the method's settings; Defaulted names those the
	// user did not set.
	Hyperparameters map[string]any
	Defaulted       []string
	Guarantee       accounting.Guarantee
	TrainRows       int64
	// TrainCounts are the training file's class counts, as published by the
	// training file (not private); used to find the minority classes.
	TrainCounts []int64
	Version     string
	Created     string
}

// Stamp records the dpfeat version and the creation time in the
// classifier: now, or the time SOURCE_DATE_EPOCH gives (seconds since
// 1970, the reproducible-builds convention), so that two seeded fits of
// the same data write byte-identical files.
func (c *Classifier) Stamp(version string) {
	c.Version, c.Created = version, Now()
}

// Now is the creation time dpfeat writes into files (RFC 3339, UTC): the
// current time, or SOURCE_DATE_EPOCH when it is set to a whole number.
func Now() string {
	t := time.Now()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
			t = time.Unix(sec, 0)
		}
	}
	return t.UTC().Format(time.RFC3339)
}

// Preprocessing is what is applied to a feature vector before scoring: the
// one type of package preprocessing, which the methods train with.
type Preprocessing = preprocessing.Preprocessing

// Scores computes the class scores of one feature vector into out (len
// Classes); x is preprocessed first (x is modified).
func (c *Classifier) Scores(x []float64, out []float64) { c.score(c.Prep.Apply(x), out) }

// score is Scores of a preprocessed vector.
func (c *Classifier) score(x []float64, out []float64) {
	m, d := len(c.Classes), len(x)
	switch c.Kind {
	case "prototypes":
		k := max(1, c.PerClass)
		xn := preprocessing.Norm(x)
		for j := 0; j < m; j++ {
			out[j] = protodist.ClassScore(x, xn, c.Weight, j, k, c.Distance == "cosine")
		}
	default:
		for j := 0; j < m; j++ {
			s := float64(c.Bias[j])
			for i, w := range c.Weight[j*d : (j+1)*d] {
				s += float64(w) * x[i]
			}
			out[j] = s
		}
	}
}

// Validate checks shapes and that every number is finite: a NaN model is
// never written or used.
func (c *Classifier) Validate() error {
	m := len(c.Classes)
	if m < 2 || c.Dim < 1 {
		return fmt.Errorf("classifier has %d classes and dimension %d; expected at least 2 classes", m, c.Dim)
	}
	// Sizes from the header are bounded before any product (a crafted
	// header once overflowed int to match an empty weight tensor).
	const maxSize = 1 << 31
	if c.Dim > maxSize || m > maxSize || c.PerClass < 0 || c.PerClass > maxSize || c.Prep.Pool < 0 || c.Prep.Pool > c.Dim {
		return fmt.Errorf("classifier sizes out of range: %d classes, dimension %d, %d per class, pool %d", m, c.Dim, c.PerClass, c.Prep.Pool)
	}
	want := uint64(m) * uint64(c.Prep.PooledDim(c.Dim))
	switch c.Kind {
	case "linear":
		if len(c.Bias) != m {
			return fmt.Errorf("classifier has %d biases for %d classes", len(c.Bias), m)
		}
	case "prototypes":
		hi, lo := bits.Mul64(want, uint64(max(1, c.PerClass)))
		if hi != 0 {
			return fmt.Errorf("classifier sizes overflow: %d classes × %d prototypes × dimension %d", m, c.PerClass, c.Prep.PooledDim(c.Dim))
		}
		want = lo
	default:
		return fmt.Errorf("unknown classifier kind %q", c.Kind)
	}
	if uint64(len(c.Weight)) != want {
		return fmt.Errorf("classifier has %d weights; expected %d", len(c.Weight), want)
	}
	if err := c.Prep.Check(c.Dim); err != nil {
		return fmt.Errorf("classifier %w", err)
	}
	for _, s := range [][]float32{c.Weight, c.Bias} {
		if i := features.FirstNonFinite(s); i >= 0 {
			return fmt.Errorf("classifier parameter %d is %v: refusing a non-finite model", i, s[i])
		}
	}
	return nil
}

// Save writes the classifier as a safetensors file (atomically: a temporary
// file renamed into place).
func (c *Classifier) Save(path string) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	m, d := int64(len(c.Classes)), int64(c.Prep.PooledDim(c.Dim))
	var ts []Tensor
	if c.Kind == "linear" {
		ts = append(ts, Tensor{"weight", []int64{m, d}, c.Weight}, Tensor{"bias", []int64{m}, c.Bias})
	} else {
		ts = append(ts, Tensor{"prototypes", []int64{m, int64(max(1, c.PerClass)), d}, c.Weight})
	}
	if c.Prep.Center != nil {
		ts = append(ts, Tensor{"center", []int64{int64(len(c.Prep.Center))}, Float32s(c.Prep.Center)})
	}
	if t := c.Prep.Transform; t != nil {
		for _, v := range []struct {
			name  string
			shape []int64
			data  []float64
		}{{"transform.mean", []int64{int64(t.In)}, t.Mean}, {"transform.scale", []int64{int64(t.In)}, t.Scale},
			{"transform.projection", []int64{int64(t.Dims), int64(t.In)}, t.Projection}} {
			if v.data != nil {
				ts = append(ts, Tensor{v.name, v.shape, Float32s(v.data)})
			}
		}
	}
	meta, err := c.Metadata()
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	b, err := EncodeSafetensors(ts, meta)
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return atomicfile.WriteBytes(path, b)
}

// Metadata is the classifier file's header metadata: format, kind, classes,
// dimension, preprocessing, encoder, method and hyperparameters, the full
// privacy statement, training counts, version and creation time.
func (c *Classifier) Metadata() (map[string]string, error) {
	js := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	g, err := json.Marshal(c.Guarantee)
	if err != nil {
		return nil, err
	}
	md := map[string]string{
		"format": "dpfeat.classifier.v1", "kind": c.Kind, "classes": js(c.Classes), "dim": fmt.Sprint(c.Dim),
		"preprocessing": js(c.Prep), "encoder.sha256": c.EncoderSHA256, "encoder.name": c.EncoderName,
		"method": c.Method, "hyperparameters": js(c.Hyperparameters), "defaulted": js(c.Defaulted),
		"privacy": string(g), "train_rows": fmt.Sprint(c.TrainRows), "train_counts": js(c.TrainCounts),
		"dpfeat.version": c.Version, "created": c.Created,
	}
	if c.Kind == "prototypes" {
		md["per_class"] = fmt.Sprint(max(1, c.PerClass))
		md["distance"] = c.Distance
	}
	return md, nil
}

// LoadClassifier reads a classifier file written by Save.
func LoadClassifier(path string) (*Classifier, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read classifier %s: %w", path, err)
	}
	c, err := parseClassifier(b)
	if err != nil {
		return nil, fmt.Errorf("read classifier %s: %w", path, err)
	}
	return c, nil
}

func parseClassifier(b []byte) (*Classifier, error) {
	tensors, md, err := DecodeSafetensors(b)
	if err != nil {
		return nil, err
	}
	if md["format"] != "dpfeat.classifier.v1" {
		return nil, fmt.Errorf("not a dpfeat classifier (no dpfeat.classifier.v1 metadata)")
	}
	c := &Classifier{Kind: md["kind"], EncoderSHA256: md["encoder.sha256"], EncoderName: md["encoder.name"],
		Method: md["method"], Version: md["dpfeat.version"], Created: md["created"], Distance: md["distance"]}
	fields := []struct {
		key string
		dst any
	}{{"classes", &c.Classes}, {"preprocessing", &c.Prep}, {"hyperparameters", &c.Hyperparameters},
		{"defaulted", &c.Defaulted}, {"privacy", &c.Guarantee}, {"train_counts", &c.TrainCounts}}
	for _, f := range fields {
		if v, ok := md[f.key]; ok && v != "" {
			if err := json.Unmarshal([]byte(v), f.dst); err != nil {
				return nil, fmt.Errorf("metadata %q: %v", f.key, err)
			}
		}
	}
	fmt.Sscan(md["dim"], &c.Dim)
	fmt.Sscan(md["train_rows"], &c.TrainRows)
	fmt.Sscan(md["per_class"], &c.PerClass)
	name := "weight"
	if c.Kind == "prototypes" {
		name = "prototypes"
	}
	c.Weight, c.Bias, c.Prep.Center = tensors[name].Data, tensors["bias"].Data, toFloat64(tensors["center"].Data)
	if t := c.Prep.Transform; t != nil {
		t.Mean, t.Scale = toFloat64(tensors["transform.mean"].Data), toFloat64(tensors["transform.scale"].Data)
		t.Projection = toFloat64(tensors["transform.projection"].Data)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Describe returns a one-line summary of the classifier.
func (c *Classifier) Describe() string {
	return fmt.Sprintf("%s classifier (%s) over %d classes, D = %d; %s", c.Kind, c.Method, len(c.Classes), c.Dim,
		strings.TrimSpace(c.Guarantee.String()))
}

// Float32s narrows float64 values to the float32s a classifier file stores.
func Float32s(x []float64) []float32 {
	if x == nil {
		return nil
	}
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

// toFloat64 widens a stored tensor; the values are the float32s stored.
func toFloat64(x []float32) []float64 {
	if x == nil {
		return nil
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
