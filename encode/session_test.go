//go:build cgo

package encode

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/models"
)

// needRuntime skips a test when ONNX Runtime's library is absent, unless
// DPFEAT_REQUIRE_ORT is set (as `make test` does), where that is a failure.
func needRuntime(t testing.TB) {
	t.Helper()
	if err := InitRuntime(""); err != nil {
		if os.Getenv("DPFEAT_REQUIRE_ORT") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

type golden struct {
	InputShape []int `json:"input_shape"`
	Input      []float32
	Outputs    map[string]struct {
		Shape  []int
		Values []float64
	}
}

func loadGolden(t *testing.T, name string) golden {
	b, err := os.ReadFile("../testdata/encoders/" + name + ".golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func manifest(t *testing.T, name string) *models.Manifest {
	m, err := models.LoadManifest("../testdata/encoders/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSessionMatchesPyTorch runs the test encoders on fixed tensors and
// compares with PyTorch's outputs (the golden files), for every pooling.
func TestSessionMatchesPyTorch(t *testing.T) {
	needRuntime(t)
	cases := []struct {
		model, output, pool string
		tol                 float64
		reduce              func(g golden) []float64
	}{
		{"tiny-cnn", "features", "none", 1e-5, nil},
		{"tiny-cnn", "feature_map", "gap", 1e-5, func(g golden) []float64 {
			// GAP of the feature map equals the model's own pooled output.
			return g.Outputs["features"].Values
		}},
		{"tiny-vit", "last_hidden_state", "cls", 1e-4, func(g golden) []float64 {
			o := g.Outputs["last_hidden_state"]
			n, tk, d := o.Shape[0], o.Shape[1], o.Shape[2]
			var out []float64
			for i := 0; i < n; i++ {
				out = append(out, o.Values[i*tk*d:i*tk*d+d]...)
			}
			return out
		}},
		{"tiny-vit", "last_hidden_state", "mean_patch", 1e-4, func(g golden) []float64 {
			o := g.Outputs["last_hidden_state"]
			n, tk, d := o.Shape[0], o.Shape[1], o.Shape[2]
			out := make([]float64, n*d)
			for i := 0; i < n; i++ {
				for k := 1; k < tk; k++ {
					for j := 0; j < d; j++ {
						out[i*d+j] += o.Values[(i*tk+k)*d+j] / float64(tk-1)
					}
				}
			}
			return out
		}},
		{"tiny-fp16", "features", "none", 2e-3, nil},
	}
	for _, c := range cases {
		m := manifest(t, c.model)
		m.Output.Name, m.Output.Pool, m.Output.Dim = c.output, c.pool, 0
		s, err := OpenSession("../testdata/encoders/"+c.model+".onnx", m, SessionOptions{Threads: 1})
		if err != nil {
			t.Fatalf("%s/%s: %v", c.model, c.pool, err)
		}
		g := loadGolden(t, c.model)
		want := g.Outputs[c.output].Values
		if c.reduce != nil {
			want = c.reduce(g)
		}
		n := g.InputShape[0]
		out := make([]float32, n*s.Dim())
		if err := s.Run(g.Input, n, out); err != nil {
			t.Fatal(err)
		}
		if len(want) != len(out) {
			t.Fatalf("%s/%s: %d features, want %d", c.model, c.pool, len(out), len(want))
		}
		worst := 0.0
		for i := range want {
			worst = math.Max(worst, math.Abs(float64(out[i])-want[i])/math.Max(1, math.Abs(want[i])))
		}
		if worst > c.tol {
			t.Errorf("%s/%s: max difference %.3g from PyTorch", c.model, c.pool, worst)
		}
		// Batch sizes other than the golden one work (dynamic batch axis),
		// and give the same features row by row.
		one := make([]float32, s.Dim())
		size := len(g.Input) / n
		if err := s.Run(g.Input[size:2*size], 1, one); err != nil {
			t.Fatal(err)
		}
		for j := range one {
			if math.Abs(float64(one[j]-out[s.Dim()+j])) > 1e-5*math.Max(1, math.Abs(float64(one[j]))) {
				t.Fatalf("%s/%s: batch of 1 differs from batch of %d at %d", c.model, c.pool, n, j)
			}
		}
		s.Close()
	}
}

func TestSessionRejectsMismatches(t *testing.T) {
	needRuntime(t)
	cases := []struct {
		name, model string
		edit        func(m *models.Manifest)
		want        string
	}{
		{"wrong size", "tiny-cnn", func(m *models.Manifest) { m.Input.Height = 32 }, "height 16, but the manifest says input.height 32"},
		{"wrong channels", "tiny-cnn", func(m *models.Manifest) {
			m.Input.Channels = 1
			m.Input.Mean = []float64{0}
			m.Input.Std = []float64{1}
		}, "channels 3, but the manifest says input.channels 1"},
		{"wrong input name", "tiny-cnn", func(m *models.Manifest) { m.Input.Name = "image" }, `no input named "image"`},
		{"wrong output name", "tiny-cnn", func(m *models.Manifest) { m.Output.Name = "logits" }, `no output named "logits"`},
		{"wrong pooling rank", "tiny-cnn", func(m *models.Manifest) { m.Output.Pool = "cls" }, `output.pool "cls" needs rank 3`},
		{"wrong dim", "tiny-cnn", func(m *models.Manifest) { m.Output.Dim = 9 }, "output.dim 9"},
		{"wrong dtype", "tiny-fp16", func(m *models.Manifest) { m.Input.DType = "float32" }, "element type float16"},
	}
	for _, c := range cases {
		m := manifest(t, c.model)
		c.edit(m)
		_, err := OpenSession("../testdata/encoders/"+c.model+".onnx", m, SessionOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
	dir := t.TempDir()
	bad := dir + "/bad.onnx"
	os.WriteFile(bad, []byte("this is not a model"), 0o644)
	if _, err := OpenSession(bad, manifest(t, "tiny-cnn"), SessionOptions{}); err == nil || !strings.Contains(err.Error(), "not a readable ONNX model") {
		t.Errorf("not ONNX: %v", err)
	}
	if _, err := OpenSession(dir+"/missing.onnx", manifest(t, "tiny-cnn"), SessionOptions{}); err == nil || !strings.Contains(err.Error(), "missing.onnx") {
		t.Errorf("missing model: %v", err)
	}
	// CUDA is absent from the CPU build of ONNX Runtime: a clear error for
	// cuda, a CPU fallback with a note for auto.
	if _, err := OpenSession("../testdata/encoders/tiny-cnn.onnx", manifest(t, "tiny-cnn"), SessionOptions{Device: Device{Kind: "cuda"}}); err == nil {
		t.Log("CUDA is available here")
	} else if !strings.Contains(err.Error(), "CUDA execution provider is not available") {
		t.Errorf("cuda: %v", err)
	}
	s, err := OpenSession("../testdata/encoders/tiny-cnn.onnx", manifest(t, "tiny-cnn"), SessionOptions{Device: Device{Kind: "auto"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Provider() == "cpu" && !strings.Contains(s.Note(), "running on the CPU") {
		t.Errorf("auto fallback note: %q", s.Note())
	}
	s.Close()
}

// TestCUDAErrorsSayWhatIsMissing (#38 goal 4): each CUDA failure a user
// meets is named in one line with what to do — not "install a GPU build"
// for a device number that does not exist.
func TestCUDAErrorsSayWhatIsMissing(t *testing.T) {
	d := Device{Kind: "cuda", ID: 7}
	for _, c := range []struct{ ort, want string }{
		{"CUDA failure 101: invalid device ordinal ; GPU=7 ; hostname=x ; file=cuda_execution_provider.cc", "no CUDA device 7"},
		{"Failed to load library libonnxruntime_providers_cuda.so with error: libcudnn.so.9: cannot open shared object file: No such file or directory", "cuDNN 9 for CUDA 13 is missing (libcudnn.so.9)"},
		{"Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.13: cannot open shared object file", "a CUDA 13 library is missing (libcublasLt.so.13)"},
		{"CUDA failure 100: no CUDA-capable device is detected", "no CUDA device is visible"},
		{"CUDA execution provider is not enabled in this build.", "scripts/setup-gpu.sh"},
		{"Failed to load library libonnxruntime_providers_shared.so with error: libonnxruntime_providers_shared.so: cannot open shared object file", "is CPU-only"},
	} {
		err := CUDAError(d, errors.New(c.ort))
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "CUDA 12") {
			t.Errorf("%q: %v", c.ort, err)
		}
	}
}
