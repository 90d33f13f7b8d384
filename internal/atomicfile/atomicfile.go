// Package atomicfile writes files so that the destination only ever holds
// a complete file: the content goes to a temporary file in the same folder,
// is fsynced, and is renamed over the destination; on any error the
// temporary file is removed and the destination is untouched.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write creates path with the content write produces.
func Write(path string, write func(io.Writer) error) error {
	f, err := Temp(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return Commit(f, path)
}

// Temp creates the temporary file beside path that a streaming writer
// fills before Commit.
func Temp(path string) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return f, nil
}

// Commit publishes the filled file f at path: it gets the destination's
// mode if that exists, else the usual 0644 (CreateTemp makes files 0600,
// which split and imbalance once left on their outputs), is fsynced,
// closed and renamed over path, and the folder is synced. On any error f
// is removed and path is untouched.
func Commit(f *os.File, path string) error {
	mode := os.FileMode(0o644)
	if st, serr := os.Stat(path); serr == nil {
		mode = st.Mode().Perm()
	}
	err := f.Chmod(mode)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, derr := os.Open(filepath.Dir(path)); derr == nil {
		d.Sync() // durability of the rename; failure weakens only that
		d.Close()
	}
	return nil
}

// WriteBytes creates path holding data.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
