// Package atomicfile writes files so that the destination only ever holds
// a complete file: the content goes to a temporary file in the same folder,
// is fsynced, and is renamed over the destination; on any error the
// temporary file is removed and the destination is untouched.
//
// Modes are those a shared machine expects: a new file gets 0666 less the
// process's umask (as the shell's `>` gives it: 0644 under umask 022, 0600
// under 077), and a replaced file keeps the mode its owner gave it.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/dpfeat/dpfeat/internal/interrupt"
)

// Write creates path with the content write produces.
func Write(path string, write func(io.Writer) error) error {
	f, err := Temp(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		Discard(f)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return Commit(f, path)
}

// Temp creates the temporary file beside path that a streaming writer
// fills before Commit: a new name (never an existing file or link), mode
// 0666 less the umask.
func Temp(path string) (*os.File, error) {
	return Create(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"))
}

// Create makes a new file whose name is prefix followed by random
// characters, as os.CreateTemp does, but with mode 0666 less the umask
// (os.CreateTemp gives 0600 whatever the umask). Until Commit or Discard,
// it is removed if the process quits at once (package interrupt).
func Create(prefix string) (*os.File, error) {
	for try := 0; ; try++ {
		var b [6]byte
		rand.Read(b[:])
		f, err := os.OpenFile(prefix+hex.EncodeToString(b[:]), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", prefix, err)
		}
		live.Store(f, interrupt.Temporary(f.Name()))
		return f, nil
	}
}

// live maps each temporary file to its registration with package
// interrupt.
var live sync.Map

func forget(f *os.File) {
	if fn, ok := live.LoadAndDelete(f); ok {
		fn.(func())()
	}
}

// Discard closes and removes a temporary file made by Temp or Create.
func Discard(f *os.File) {
	f.Close()
	os.Remove(f.Name()) // made by Create in this run
	forget(f)
}

// Commit publishes the filled file f at path: it keeps the destination's
// mode if that exists (else the mode it was created with), is fsynced,
// closed and renamed over path, and the folder is synced. On any error f
// is removed and path is untouched.
func Commit(f *os.File, path string) error {
	var err error
	if st, serr := os.Stat(path); serr == nil {
		err = f.Chmod(st.Mode().Perm())
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
		Discard(f)
		return fmt.Errorf("write %s: %w", path, err)
	}
	forget(f)
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
