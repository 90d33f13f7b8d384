//go:build unix

package outlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

func tryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrBusy
	}
	return err
}

func unlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// lockDir is the user's own lock folder, dpfeat-locks-UID in the system
// temporary directory: made 0700 if missing, and refused if it is a link
// or another user's (on a shared /tmp anyone may create that name first).
func lockDir() (string, error) {
	uid := os.Getuid()
	dir := filepath.Join(tempRoot, fmt.Sprintf("dpfeat-locks-%d", uid))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !st.IsDir() || (ok && int(sys.Uid) != uid) {
		return "", fmt.Errorf("%s is not a folder of this user's; remove it", dir)
	}
	return dir, nil
}
