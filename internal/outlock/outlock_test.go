package outlock

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestOneOwnerPerOutput: a second lock on the same output (spelled
// differently) fails while the first is held, and succeeds after release;
// another output is independent.
func TestOneOwnerPerOutput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "f.arrow")
	release, err := Lock(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(filepath.Join(dir, ".", "f.arrow")); !errors.Is(err, ErrBusy) {
		t.Fatalf("second lock: %v", err)
	}
	other, err := Lock(filepath.Join(dir, "g.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	other()
	release()
	again, err := Lock(out)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
}
