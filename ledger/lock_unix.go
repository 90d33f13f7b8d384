//go:build unix

package ledger

import (
	"os"
	"syscall"
)

// flock locks are held per open file: two opens — in two goroutines or
// two processes — exclude each other.
func lockExclusive(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }
func lockShared(f *os.File) error    { return syscall.Flock(int(f.Fd()), syscall.LOCK_SH) }
func unlock(f *os.File) error        { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
