//go:build !unix

package ledger

import (
	"errors"
	"os"
)

var errNoLock = errors.New("budget ledgers need file locks (flock), which this system lacks")

func lockExclusive(*os.File) error { return errNoLock }
func lockShared(*os.File) error    { return errNoLock }
func unlock(*os.File) error        { return nil }
