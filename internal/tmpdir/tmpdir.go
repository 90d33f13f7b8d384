// Package tmpdir gives libraries that litter the temporary directory a
// folder of their own: Beam's loopback runner leaves an empty placeholder
// file there on every run, and ONNX Runtime's telemetry creates an empty
// mat-debug-PID.log when its library is loaded. Contain points TMPDIR at a
// new folder while such a call runs, then restores it and removes the
// folder, which this package made and nothing else wrote to knowingly.
package tmpdir

import (
	"os"
	"sync"

	"github.com/dpfeat/dpfeat/internal/interrupt"
)

var mu sync.Mutex

// Contain calls fn with TMPDIR pointing at a new folder (prefix names it),
// and removes that folder after. Calls are serialised; other goroutines
// that ask for the temporary directory meanwhile get the folder too, so
// callers keep the window to the library call that needs it.
func Contain(prefix string, fn func() error) error {
	mu.Lock()
	defer mu.Unlock()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return err
	}
	defer interrupt.Temporary(dir)()
	defer os.RemoveAll(dir) // made just above, for this call's files alone
	if old, had := os.LookupEnv("TMPDIR"); had {
		defer os.Setenv("TMPDIR", old)
	} else {
		defer os.Unsetenv("TMPDIR")
	}
	os.Setenv("TMPDIR", dir)
	return fn()
}
