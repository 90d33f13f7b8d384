// Package orttest holds what tests that run ONNX Runtime share: the rule
// for a missing runtime, and running a model on one float32 input.
package orttest

import (
	"os"
	"testing"

	"github.com/dpfeat/dpfeat/encode"
)

// Need skips a test when ONNX Runtime's library is absent, unless
// DPFEAT_REQUIRE_ORT is set (as `make test` does), where that is a
// failure. (Package encode's own tests keep a copy: they cannot import
// this package, which imports encode.)
func Need(t testing.TB) {
	t.Helper()
	if err := encode.InitRuntime(""); err != nil {
		if os.Getenv("DPFEAT_REQUIRE_ORT") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}
