package outlock

import (
	"errors"
	"os"
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

// TestOneLockThroughLinks (#35 item 14): a run writing through a symlinked
// folder and one writing through the real folder own one output, so they
// take one lock.
func TestOneLockThroughLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	release, err := Lock(filepath.Join(real, "f.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := Lock(filepath.Join(link, "f.arrow")); !errors.Is(err, ErrBusy) {
		t.Fatalf("the same output through a symlinked folder took another lock: %v", err)
	}
}
