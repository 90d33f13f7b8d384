//go:build cgo

package encode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/dpfeat/dpfeat/internal/tmpdir"
	"github.com/dpfeat/dpfeat/models"
)

var (
	initMu  sync.Mutex
	initLib string
)

// BuiltWithLibrary is the ONNX Runtime library the build was made
// against (make build sets it with -ldflags -X): the binary finds it
// wherever it is copied, as long as the library stays.
var BuiltWithLibrary = ""

// libraryCandidates lists where ONNX Runtime's library is looked for:
// $ONNXRUNTIME_LIB when set (the user's choice wins, e.g. a GPU build);
// the library the build was made against; a library directory beside the
// binary (make install's PREFIX/lib/dpfeat, or lib/ next to it); the
// repository's .deps; the system's.
func libraryCandidates(explicit string) []string {
	if explicit != "" {
		return []string{explicit}
	}
	if env := os.Getenv("ONNXRUNTIME_LIB"); env != "" {
		return []string{env}
	}
	var c []string
	if BuiltWithLibrary != "" {
		c = append(c, BuiltWithLibrary)
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dir := filepath.Dir(exe)
		c = append(c, filepath.Join(dir, "..", "lib", "dpfeat", "libonnxruntime.so.1"),
			filepath.Join(dir, "lib", "libonnxruntime.so.1"),
			filepath.Join(dir, "..", ".deps", "onnxruntime", "libonnxruntime.so.1"))
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			c = append(c, filepath.Join(dir, ".deps", "onnxruntime", "libonnxruntime.so.1"))
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return append(c, "/usr/lib/libonnxruntime.so.1", "/usr/local/lib/libonnxruntime.so.1")
}

// InitRuntime loads ONNX Runtime's shared library once per process.
func InitRuntime(library string) error {
	initMu.Lock()
	defer initMu.Unlock()
	if ort.IsInitialized() {
		return nil
	}
	cands := libraryCandidates(library)
	var tried []string
	for _, p := range cands {
		if _, err := os.Stat(p); err != nil {
			tried = append(tried, p)
			continue
		}
		ort.SetSharedLibraryPath(p)
		// Loading the library creates an empty mat-debug-PID.log (its
		// telemetry's) in the temporary directory: a folder of its own (tmpdir).
		if err := tmpdir.Contain("dpfeat-ort-", func() error { return ort.InitializeEnvironment(ort.WithLogLevelError()) }); err != nil {
			return fmt.Errorf("load ONNX Runtime from %s: %v", p, err)
		}
		ort.DisableTelemetry()
		initLib = p
		return nil
	}
	return fmt.Errorf("ONNX Runtime's library was not found (tried %s): make install puts it beside the binary (PREFIX/lib/dpfeat), scripts/setup.sh fetches it, or set ONNXRUNTIME_LIB to a libonnxruntime.so.1",
		strings.Join(tried, ", "))
}

// RuntimeLibrary returns the path ONNX Runtime was loaded from.
func RuntimeLibrary() string {
	initMu.Lock()
	defer initMu.Unlock()
	return initLib
}

// RuntimeVersion returns ONNX Runtime's version, once loaded.
func RuntimeVersion() string {
	if !ort.IsInitialized() {
		return ""
	}
	return ort.GetVersion()
}

// Session runs an encoder on batches of preprocessed images. Run is safe
// for concurrent use (ONNX Runtime sessions are).
type Session struct {
	s        *ort.DynamicAdvancedSession
	m        *models.Manifest
	in, out  ort.InputOutputInfo
	dim      int
	provider string
	note     string
	// outShape is the output's shape with the batch axis set to 1;
	// known after open.
	outShape []int64
}

// OpenSession loads an ONNX model, checks it against the manifest and
// starts a session on the requested device.
func OpenSession(modelPath string, m *models.Manifest, opt SessionOptions) (*Session, error) {
	if err := InitRuntime(opt.Library); err != nil {
		return nil, err
	}
	if _, err := os.Stat(modelPath); err != nil {
		return nil, fmt.Errorf("model %s: %w", modelPath, err)
	}
	ins, outs, err := ort.GetInputOutputInfo(modelPath)
	if err != nil {
		return nil, fmt.Errorf("model %s: not a readable ONNX model: %v", modelPath, err)
	}
	s := &Session{m: m}
	if s.in, err = pickIO(ins, m.Input.Name, "input", "input.name"); err != nil {
		return nil, fmt.Errorf("model %s: %w", modelPath, err)
	}
	if s.out, err = pickIO(outs, m.Output.Name, "output", "output.name"); err != nil {
		return nil, fmt.Errorf("model %s: %w", modelPath, err)
	}
	if err := s.checkInput(); err != nil {
		return nil, fmt.Errorf("model %s: %w", modelPath, err)
	}
	if err := s.checkOutput(); err != nil {
		return nil, fmt.Errorf("model %s: %w", modelPath, err)
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("ONNX Runtime session options: %v", err)
	}
	defer so.Destroy()
	if opt.Threads > 0 {
		if err := so.SetIntraOpNumThreads(opt.Threads); err != nil {
			return nil, fmt.Errorf("--threads %d: %v", opt.Threads, err)
		}
		if err := so.SetInterOpNumThreads(1); err != nil {
			return nil, fmt.Errorf("--threads: %v", err)
		}
	}
	spin := "0"
	if opt.Spin {
		spin = "1"
	}
	if err := so.AddSessionConfigEntry("session.intra_op.allow_spinning", spin); err != nil {
		return nil, fmt.Errorf("ONNX Runtime session options: %v", err)
	}
	if s.provider, s.note, err = ApplyDevice(so, opt.Device); err != nil {
		return nil, err
	}
	s.s, err = ort.NewDynamicAdvancedSession(modelPath, []string{s.in.Name}, []string{s.out.Name}, so)
	if err != nil {
		if e := cudaCause(opt.Device, err); e != nil && s.provider != "cpu" {
			return nil, e // (a device that does not exist shows here)
		}
		return nil, fmt.Errorf("model %s: ONNX Runtime cannot load it: %v", modelPath, err)
	}
	if err := s.probe(); err != nil {
		s.Close()
		return nil, fmt.Errorf("model %s: %w", modelPath, err)
	}
	return s, nil
}

// ApplyDevice adds the device's execution provider to session options:
// nothing for the CPU; CUDA for cuda (an error that says what is missing
// when it cannot be used) and for auto (a note, and the CPU, when it
// cannot). It returns the provider that will run, and the note.
func ApplyDevice(so *ort.SessionOptions, d Device) (provider, note string, err error) {
	if d.Kind != "cuda" && d.Kind != "auto" {
		return "cpu", "", nil
	}
	if err := appendCUDA(so, d); err != nil {
		if d.Kind == "cuda" {
			return "", "", CUDAError(d, err)
		}
		why := firstLine(err)
		if e := cudaCause(d, err); e != nil {
			why = strings.TrimPrefix(e.Error(), "--device "+d.String()+": ")
			why, _, _ = strings.Cut(why, ": install")
		}
		return "cpu", fmt.Sprintf("--device auto: CUDA is not available (%s); running on the CPU", why), nil
	}
	return fmt.Sprintf("cuda:%d", d.ID), "", nil
}

// CUDAError says, in one line, why the CUDA execution provider failed
// and what to do: a device that does not exist, CUDA 13 or cuDNN 9
// libraries that cannot be found, or an ONNX Runtime built without CUDA.
func CUDAError(d Device, err error) error {
	if e := cudaCause(d, err); e != nil {
		return e
	}
	return fmt.Errorf("--device %s: the CUDA execution provider is not available: %s. The ONNX Runtime that scripts/setup.sh fetches is CPU-only: scripts/setup-gpu.sh fetches ONNX Runtime 1.29 with its CUDA 13 provider and sets ONNXRUNTIME_LIB; or use --device cpu", d, firstLine(err))
}

// cudaCause names a CUDA failure it recognises in err (nil otherwise).
func cudaCause(d Device, err error) error {
	msg := err.Error()
	lib := "" // the CUDA library that failed (ONNX Runtime's own provider files are not: their absence is a CPU-only runtime)
	for _, l := range regexp.MustCompile(`lib[A-Za-z0-9_]+\.so(\.[0-9]+)*`).FindAllString(msg, -1) {
		if !strings.HasPrefix(l, "libonnxruntime") {
			lib = l
		}
	}
	switch {
	case strings.Contains(msg, "invalid device ordinal") || strings.Contains(msg, "cudaErrorInvalidDevice"):
		return fmt.Errorf("--device %s: this machine has no CUDA device %d (nvidia-smi lists its devices, numbered from 0)", d, d.ID)
	case strings.Contains(msg, "no CUDA-capable device") || strings.Contains(msg, "cudaErrorNoDevice"):
		return fmt.Errorf("--device %s: no CUDA device is visible (check nvidia-smi, the driver, and CUDA_VISIBLE_DEVICES); use --device cpu", d)
	case strings.Contains(msg, "libcudnn"):
		return fmt.Errorf("--device %s: cuDNN 9 for CUDA 13 is missing (%s): install it (pip install nvidia-cudnn-cu13, or NVIDIA's libcudnn9-cuda-13) and put its lib folder on LD_LIBRARY_PATH (scripts/setup-gpu.sh finds it)", d, lib)
	case lib != "" && (strings.Contains(msg, "cannot open shared object") || strings.Contains(msg, "Failed to load")):
		return fmt.Errorf("--device %s: a CUDA 13 library is missing (%s): install the CUDA 13 runtime (a CUDA toolkit, or pip install nvidia-cuda-runtime-cu13 nvidia-cublas-cu13 nvidia-cufft-cu13 nvidia-curand-cu13) and put its lib folders on LD_LIBRARY_PATH (scripts/setup-gpu.sh finds them)", d, lib)
	}
	return nil
}

func appendCUDA(so *ort.SessionOptions, d Device) error {
	co, err := ort.NewCUDAProviderOptions()
	if err != nil {
		return err
	}
	defer co.Destroy()
	opts := map[string]string{"device_id": fmt.Sprint(d.ID)}
	if d.ExactFloat32 {
		opts["use_tf32"] = "0"
	}
	if err := co.Update(opts); err != nil {
		return err
	}
	return so.AppendExecutionProviderCUDA(co)
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func pickIO(list []ort.InputOutputInfo, name, what, key string) (ort.InputOutputInfo, error) {
	var names []string
	for _, io := range list {
		names = append(names, fmt.Sprintf("%q %s", io.Name, io.Dimensions))
		if name != "" && io.Name == name {
			return io, nil
		}
	}
	if name == "" {
		if what == "output" && len(list) > 0 {
			return list[0], nil
		}
		if len(list) == 1 {
			return list[0], nil
		}
		return ort.InputOutputInfo{}, fmt.Errorf("it has %d %ss (%s); set %s in the manifest", len(list), what, strings.Join(names, ", "), key)
	}
	return ort.InputOutputInfo{}, fmt.Errorf("no %s named %q (the model's %ss: %s); fix %s in the manifest", what, name, what, strings.Join(names, ", "), key)
}

func (s *Session) checkInput() error {
	in := s.m.Input
	d := s.in.Dimensions
	if s.in.OrtValueType != ort.ONNXTypeTensor {
		return fmt.Errorf("input %q is not a tensor", s.in.Name)
	}
	want := map[string]ort.TensorElementDataType{"float32": ort.TensorElementDataTypeFloat, "float16": ort.TensorElementDataTypeFloat16}[in.DType]
	if s.in.DataType != want {
		return fmt.Errorf("input %q has element type %s; the manifest says %s (input.dtype)", s.in.Name, typeName(s.in.DataType), in.DType)
	}
	if len(d) != 4 {
		return fmt.Errorf("input %q has shape %s (rank %d); the manifest describes rank-4 %s images", s.in.Name, d, len(d), in.Layout)
	}
	c, h, w := d[1], d[2], d[3]
	if in.Layout == "NHWC" {
		h, w, c = d[1], d[2], d[3]
	}
	for _, chk := range []struct {
		name       string
		model, man int64
	}{{"channels", c, int64(in.Channels)}, {"height", h, int64(in.Height)}, {"width", w, int64(in.Width)}} {
		if chk.model > 0 && chk.model != chk.man {
			return fmt.Errorf("input %q has shape %s: %s %d, but the manifest says input.%s %d (layout %s)", s.in.Name, d, chk.name, chk.model, chk.name, chk.man, in.Layout)
		}
	}
	return nil
}

func (s *Session) checkOutput() error {
	d := s.out.Dimensions
	if s.out.OrtValueType != ort.ONNXTypeTensor {
		return fmt.Errorf("output %q is not a tensor", s.out.Name)
	}
	if s.out.DataType != ort.TensorElementDataTypeFloat && s.out.DataType != ort.TensorElementDataTypeFloat16 {
		return fmt.Errorf("output %q has element type %s; expected float32 or float16", s.out.Name, typeName(s.out.DataType))
	}
	rank := map[string]int{models.PoolNone: 2, models.PoolCLS: 3, models.PoolMean: 3, models.PoolMeanPatch: 3, models.PoolGAP: 4}[s.m.Output.Pool]
	if len(d) != rank {
		return fmt.Errorf("output %q has shape %s (rank %d); output.pool %q needs rank %d", s.out.Name, d, len(d), s.m.Output.Pool, rank)
	}
	return nil
}

// probe learns the output's shape (dynamic axes included) by running one
// zero image, and checks the feature dimension.
func (s *Session) probe() error {
	known := true
	for _, d := range s.out.Dimensions[1:] {
		known = known && d > 0
	}
	if known {
		s.outShape = append([]int64{1}, s.out.Dimensions[1:]...)
	} else if s.out.DataType == ort.TensorElementDataTypeFloat16 {
		return fmt.Errorf("output %q is float16 with dynamic axes %s; dpfeat needs its non-batch axes fixed to preallocate it (re-export with static shapes but a dynamic batch)", s.out.Name, s.out.Dimensions)
	}
	x := make([]float32, NewPreprocessor(s.m.Input).Size())
	shape, err := s.runRaw(x, nil, 1, nil)
	if err != nil {
		return fmt.Errorf("a test run failed: %v", err)
	}
	s.outShape = shape
	switch s.m.Output.Pool {
	case models.PoolGAP:
		s.dim = int(shape[1])
	default:
		s.dim = int(shape[len(shape)-1])
	}
	if s.m.Output.Pool == models.PoolMeanPatch && shape[1] < 2 {
		return fmt.Errorf("output %q has %d token(s); mean_patch needs a CLS token and at least one patch", s.out.Name, shape[1])
	}
	if s.m.Output.Dim != 0 && s.m.Output.Dim != s.dim {
		return fmt.Errorf("output %q gives %d features per image, but the manifest says output.dim %d", s.out.Name, s.dim, s.m.Output.Dim)
	}
	return nil
}

// Dim returns the feature dimension D.
func (s *Session) Dim() int { return s.dim }

// FixedBatch is the batch size the model's input fixes (its first axis),
// or 0 when the axis is dynamic: a model exported with batch 1 takes
// exactly one image per call, which --encoder-batch must say.
func (s *Session) FixedBatch() int {
	if d := s.in.Dimensions; len(d) > 0 && d[0] > 0 {
		return int(d[0])
	}
	return 0
}

// Provider returns where the session runs ("cpu" or "cuda:N").
func (s *Session) Provider() string { return s.provider }

// Note returns a remark about the device choice (a fallback), or "".
func (s *Session) Note() string { return s.note }

// Run computes the features of n images whose preprocessed tensors lie in x
// (n·C·H·W floats, the manifest's layout) into out (n·D floats).
func (s *Session) Run(x []float32, n int, out []float32) error {
	if len(out) < n*s.dim {
		return fmt.Errorf("encode: output buffer of %d floats for %d×%d features", len(out), n, s.dim)
	}
	_, err := s.runRaw(x, nil, n, out)
	return err
}

// HalfInput reports whether the model takes float16 input: Extract's
// workers then convert each batch as they preprocess it and call RunHalf,
// so that no per-element work is left on the goroutine that calls ONNX
// Runtime (halfEncoder).
func (s *Session) HalfInput() bool { return s.m.Input.DType == "float16" }

// RunHalf is Run for a batch already converted to IEEE half precision
// (f32ToF16 of the preprocessed tensor): ONNX Runtime reads h in place.
func (s *Session) RunHalf(h []uint16, n int, out []float32) error {
	if len(out) < n*s.dim {
		return fmt.Errorf("encode: output buffer of %d floats for %d×%d features", len(out), n, s.dim)
	}
	_, err := s.runRaw(nil, h, n, out)
	return err
}

// runRaw runs the model on x, or on h (x converted to half precision)
// when x is nil, and, when out is not nil, pools its output into out. It
// returns the output's shape.
func (s *Session) runRaw(x []float32, h []uint16, n int, out []float32) ([]int64, error) {
	in := s.m.Input
	size := in.Channels * in.Height * in.Width
	if got := max(len(x), len(h)); got < n*size || n < 1 {
		return nil, fmt.Errorf("encode: %d input floats for %d images of %d", got, n, size)
	}
	shape := ort.NewShape(int64(n), int64(in.Channels), int64(in.Height), int64(in.Width))
	if in.Layout == "NHWC" {
		shape = ort.NewShape(int64(n), int64(in.Height), int64(in.Width), int64(in.Channels))
	}
	var input ort.Value
	var err error
	if in.DType == "float16" {
		if x != nil {
			h = make([]uint16, n*size)
			toHalf(h, x[:n*size])
		}
		input, err = ort.NewCustomDataTensor(shape, u16bytes(h[:n*size]), ort.TensorElementDataTypeFloat16)
	} else {
		input, err = ort.NewTensor(shape, x[:n*size])
	}
	if err != nil {
		return nil, err
	}
	defer input.Destroy()

	// Preallocate the output when its shape is known: required for
	// float16 (onnxruntime_go v1.36.0 mis-sizes auto-allocated float16
	// outputs) and it saves an allocation for float32.
	var output ort.Value
	var raw32 []float32
	var raw16 []uint16
	if s.outShape != nil {
		oshape := append([]int64{int64(n)}, s.outShape[1:]...)
		count := int64(1)
		for _, d := range oshape {
			count *= d
		}
		if s.out.DataType == ort.TensorElementDataTypeFloat16 {
			raw16 = make([]uint16, count)
			output, err = ort.NewCustomDataTensor(ort.NewShape(oshape...), u16bytes(raw16), ort.TensorElementDataTypeFloat16)
		} else {
			raw32 = make([]float32, count)
			output, err = ort.NewTensor(ort.NewShape(oshape...), raw32)
		}
		if err != nil {
			return nil, err
		}
	}
	outs := []ort.Value{output}
	if err := s.s.Run([]ort.Value{input}, outs); err != nil {
		if output != nil {
			output.Destroy()
		}
		return nil, err
	}
	defer outs[0].Destroy()
	oshape := []int64(outs[0].GetShape())
	if out == nil {
		return oshape, nil
	}
	vals := raw32
	if raw16 != nil {
		vals = make([]float32, len(raw16))
		for i, h := range raw16 {
			vals[i] = f16ToF32(h)
		}
	} else if vals == nil {
		t, ok := outs[0].(*ort.Tensor[float32])
		if !ok {
			return nil, errors.New("encode: unexpected output tensor type")
		}
		vals = t.GetData()
	}
	pool(s.m.Output.Pool, vals, oshape, n, out[:n*s.dim])
	return oshape, nil
}

func u16bytes(h []uint16) []byte {
	if len(h) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&h[0])), 2*len(h))
}

// Close releases the session.
func (s *Session) Close() error {
	if s.s != nil {
		err := s.s.Destroy()
		s.s = nil
		return err
	}
	return nil
}

// typeName names an element type the way manifests do.
func typeName(t ort.TensorElementDataType) string {
	switch t {
	case ort.TensorElementDataTypeFloat:
		return "float32"
	case ort.TensorElementDataTypeFloat16:
		return "float16"
	case ort.TensorElementDataTypeDouble:
		return "float64"
	case ort.TensorElementDataTypeUint8:
		return "uint8"
	}
	return strings.ToLower(strings.TrimPrefix(t.String(), "ONNX_TENSOR_ELEMENT_DATA_TYPE_"))
}
