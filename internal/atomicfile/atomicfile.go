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
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	err = write(f)
	if err == nil {
		// CreateTemp makes the file private (0600); the result gets the
		// destination's mode if it exists, else the usual 0644.
		mode := os.FileMode(0o644)
		if st, serr := os.Stat(path); serr == nil {
			mode = st.Mode().Perm()
		}
		err = f.Chmod(mode)
	}
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
