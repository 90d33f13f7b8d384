package encode

import (
	"fmt"
	"strconv"
	"strings"
)

// Device says where the encoder runs.
type Device struct {
	// Kind is "cpu", "cuda" or "auto" (CUDA when available, else CPU).
	Kind string
	// ID is the CUDA device ordinal.
	ID int
	// ExactFloat32 turns off TF32 on CUDA (--tf32=false): ONNX Runtime's
	// CUDA kernels use TF32 for float32 matrix products by default, so
	// features differ from the CPU's by about 10⁻³ relative (ViT-B/16);
	// exact float32 matches them to about 10⁻⁶, more slowly.
	ExactFloat32 bool
}

// ParseDevice reads --device: cpu, cuda, cuda:N, auto.
func ParseDevice(s string) (Device, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case s == "" || s == "cpu":
		return Device{Kind: "cpu"}, nil
	case s == "auto":
		return Device{Kind: "auto"}, nil
	case s == "cuda":
		return Device{Kind: "cuda"}, nil
	case strings.HasPrefix(s, "cuda:"):
		id, err := strconv.Atoi(s[5:])
		if err != nil || id < 0 {
			return Device{}, fmt.Errorf("--device %q: expected cuda:N with N a device number", s)
		}
		return Device{Kind: "cuda", ID: id}, nil
	}
	return Device{}, fmt.Errorf("--device %q: expected cpu, cuda, cuda:N or auto", s)
}

func (d Device) String() string {
	if d.Kind == "cuda" {
		return fmt.Sprintf("cuda:%d", d.ID)
	}
	return d.Kind
}

// SessionOptions tunes OpenSession.
type SessionOptions struct {
	// Threads is ONNX Runtime's intra-op thread count (0: its default,
	// one per core).
	Threads int
	Device  Device
	// Library is the path of libonnxruntime; empty means $ONNXRUNTIME_LIB
	// or the copy scripts/setup.sh provides.
	Library string
	// Spin lets ONNX Runtime's threads busy-wait between operators. Off by
	// default: during extraction the decode workers need those cycles.
	Spin bool
}
