// Package outlock makes one process at a time the owner of an output: a
// run that writes OUT (and its partial, journal or checkpoint files) holds
// an exclusive lock keyed by the file OUT names (its path with the links
// of its folders resolved, so that two spellings of one output, one
// through a symlinked folder, take one lock), so that a second run on the
// same output — a --resume started while the first still writes — fails
// at once instead of publishing a truncated file under the first run's
// feet. The lock files live in a folder of the user's own under the system
// temporary directory (nothing is left beside the user's files); the
// operating system releases a lock when its process ends, however it ends.
package outlock

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dpfeat/dpfeat/internal/fspath"
)

// tempRoot is the system temporary directory as the process started:
// every lock of the process lives under it, even while a Beam run points
// TMPDIR at its own scratch folder.
var tempRoot = os.TempDir()

// ErrBusy is returned when another run holds the output.
var ErrBusy = errors.New("another dpfeat run is writing it")

// Lock takes the lock of output path out; release gives it back.
func Lock(out string) (release func(), err error) {
	dir, err := lockDir()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", out, err)
	}
	h := sha256.Sum256([]byte(fspath.Resolve(out)))
	f, err := os.OpenFile(filepath.Join(dir, hex.EncodeToString(h[:12])+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", out, err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, ErrBusy) {
			return nil, fmt.Errorf("%s: %w (wait for it to finish, or stop it: its progress is kept for --resume)", out, ErrBusy)
		}
		return nil, fmt.Errorf("lock %s: %w", out, err)
	}
	return func() { unlock(f); f.Close() }, nil
}
