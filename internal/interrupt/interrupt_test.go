package interrupt

import (
	"os"
	"path/filepath"
	"testing"
)

func TestObserveAndTemporaries(t *testing.T) {
	if Observed() {
		t.Fatal("observed before any work")
	}
	done := Observe()
	if !Observed() {
		t.Fatal("not observed during work")
	}
	done()
	done() // twice is once
	if Observed() {
		t.Fatal("still observed after the work ended")
	}
	dir := t.TempDir()
	kept, gone := filepath.Join(dir, "kept"), filepath.Join(dir, "gone")
	os.WriteFile(kept, nil, 0o644)
	os.WriteFile(gone, nil, 0o644)
	forget := Temporary(kept)
	Temporary(gone)
	forget() // published: no longer this package's to remove
	RemoveTemporaries()
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("a forgotten path was removed: %v", err)
	}
	if _, err := os.Stat(gone); err == nil {
		t.Error("a registered temporary survived RemoveTemporaries")
	}
}
