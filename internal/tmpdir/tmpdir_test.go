package tmpdir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestContainLeavesNothing: what fn leaves in the temporary directory is gone
// after Contain, the canary beside it stays, and TMPDIR is restored.
func TestContainLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	canary := filepath.Join(tmp, "canary")
	os.WriteFile(canary, []byte("keep"), 0o644)
	var seen string
	err := Contain("dpfeat-test-", func() error {
		seen = os.TempDir()
		return os.WriteFile(filepath.Join(seen, "litter.log"), nil, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(seen) != tmp || seen == tmp {
		t.Errorf("fn saw TMPDIR %s, want a new folder in %s", seen, tmp)
	}
	if os.TempDir() != tmp {
		t.Errorf("TMPDIR is %s after Contain, want %s", os.TempDir(), tmp)
	}
	ents, _ := os.ReadDir(tmp)
	if len(ents) != 1 || ents[0].Name() != "canary" {
		t.Errorf("the temporary directory holds %v after Contain", ents)
	}
}
