package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteKeepsTheOldFileOnError(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := WriteBytes(p, []byte("good")); err != nil {
		t.Fatal(err)
	}
	err := Write(p, func(w io.Writer) error {
		w.Write([]byte("half"))
		return errors.New("disk full")
	})
	if err == nil {
		t.Fatal("no error")
	}
	if b, _ := os.ReadFile(p); string(b) != "good" {
		t.Errorf("destination changed to %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

func TestWriteModes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := WriteBytes(p, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", st.Mode().Perm())
	}
	os.Chmod(p, 0o600)
	if err := WriteBytes(p, []byte("b")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("replaced file mode %v, want the old 0600", st.Mode().Perm())
	}
}
