//go:build !unix

package outlock

import (
	"os"
	"path/filepath"
)

// Without flock the lock is not enforced (dpfeat's supported platforms
// are unix).
func tryLock(*os.File) error { return nil }
func unlock(*os.File)        {}

func lockDir() (string, error) {
	dir := filepath.Join(tempRoot, "dpfeat-locks")
	return dir, os.MkdirAll(dir, 0o700)
}
