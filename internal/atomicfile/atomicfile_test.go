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
