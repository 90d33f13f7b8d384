package filehash

import (
	"os"
	"path/filepath"
	"testing"
)

// The SHA-256 of "abc" (FIPS 180-2, Appendix B.1).
func TestSHA256(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("abc"), 0o644)
	got, err := SHA256(p)
	if err != nil || got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("%s %v", got, err)
	}
	if _, err := SHA256(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file hashed")
	}
}
