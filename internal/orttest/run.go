//go:build cgo

package orttest

import (
	"testing"

	ort "github.com/yalue/onnxruntime_go"
)

// Run runs an ONNX model (its bytes) on one float32 input of the given
// shape and returns copies of the named outputs' values: []float32 for
// float outputs, []int64 for int64 ones.
func Run(t testing.TB, model []byte, input string, x []float32, shape []int64, outputs ...string) []any {
	t.Helper()
	Need(t)
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(model, []string{input}, outputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	in, err := ort.NewTensor(ort.NewShape(shape...), x)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Destroy()
	outs := make([]ort.Value, len(outputs))
	if err := s.Run([]ort.Value{in}, outs); err != nil {
		t.Fatal(err)
	}
	got := make([]any, len(outs))
	for i, v := range outs {
		switch v := v.(type) {
		case *ort.Tensor[float32]:
			got[i] = append([]float32(nil), v.GetData()...)
		case *ort.Tensor[int64]:
			got[i] = append([]int64(nil), v.GetData()...)
		default:
			t.Fatalf("output %s: unexpected type %T", outputs[i], v)
		}
		v.Destroy()
	}
	return got
}
