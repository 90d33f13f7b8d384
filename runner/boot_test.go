package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPruneWorkers: the binary cache keeps the three binaries used last
// and removes retrieval folders over an hour old; anything else there —
// another file, a fresh retrieval — is left alone.
func TestPruneWorkers(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	var bins []string
	for i := 0; i < 5; i++ {
		name := filepath.Join(dir, strings.Repeat(string(rune('a'+i)), 64))
		os.WriteFile(name, []byte("bin"), 0o700)
		used := now.Add(-time.Duration(i) * time.Minute) // a: used last
		os.Chtimes(name, used, used)
		bins = append(bins, name)
	}
	other := filepath.Join(dir, "notes.txt")
	os.WriteFile(other, nil, 0o600)
	stale, fresh := filepath.Join(dir, ".staged-1"), filepath.Join(dir, ".staged-2")
	os.Mkdir(stale, 0o700)
	os.Mkdir(fresh, 0o700)
	old := now.Add(-2 * time.Hour)
	os.Chtimes(stale, old, old)
	pruneWorkers(dir, 3)
	for i, b := range bins {
		_, err := os.Stat(b)
		if kept := err == nil; kept != (i < 3) {
			t.Errorf("binary %d (used %d min ago): kept %v", i, i, kept)
		}
	}
	for _, p := range []string{other, fresh} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", filepath.Base(p))
		}
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a retrieval folder two hours old was kept")
	}
}

// TestDeclaredSHA256: only a well-formed SHA-256 of the worker binary is
// trusted as a cache key.
func TestDeclaredSHA256(t *testing.T) {
	if isSHA256(strings.Repeat("A", 64)) || isSHA256(strings.Repeat("a", 63)) || isSHA256("../"+strings.Repeat("a", 61)) || !isSHA256(strings.Repeat("0f", 32)) {
		t.Error("isSHA256 accepts a name that is not a lower-case SHA-256, or refuses one that is")
	}
	if got := declaredSHA256(nil); got != "" {
		t.Errorf("no artifacts: %q", got)
	}
}
