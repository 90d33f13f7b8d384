//go:build cgo

package encode

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The library is found wherever the binary is copied: $ONNXRUNTIME_LIB
// first, then the library the build was made against, then beside the
// binary (make install's layout), then the repository's and the system's.
func TestLibraryCandidatesOrder(t *testing.T) {
	t.Setenv("ONNXRUNTIME_LIB", "")
	old := BuiltWithLibrary
	BuiltWithLibrary = "/built/with/libonnxruntime.so.1"
	defer func() { BuiltWithLibrary = old }()
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	c := libraryCandidates("")
	want := []string{BuiltWithLibrary, filepath.Join(filepath.Dir(exe), "..", "lib", "dpfeat", "libonnxruntime.so.1")}
	if len(c) < 2 || !slices.Equal(c[:2], want) {
		t.Errorf("candidates %v, want %v first", c, want)
	}
	t.Setenv("ONNXRUNTIME_LIB", "/env/lib.so")
	if c := libraryCandidates(""); !slices.Equal(c, []string{"/env/lib.so"}) {
		t.Errorf("with ONNXRUNTIME_LIB: %v", c)
	}
	if c := libraryCandidates("/flag.so"); !slices.Equal(c, []string{"/flag.so"}) {
		t.Errorf("explicit: %v", c)
	}
}
