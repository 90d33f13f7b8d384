//go:build unix

package features

import (
	"os"
	"syscall"
)

// mapFile memory-maps f read-only. The mapping outlives f's descriptor.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size == 0 || int64(int(size)) != size {
		return nil, nil, errNoMap
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
