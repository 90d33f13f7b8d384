//go:build unix

package features

import (
	"os"
	"syscall"
)

// populateBelow is the file size under which a map is populated at once.
const populateBelow = 256 << 20

// mapFile memory-maps f read-only. The mapping outlives f's descriptor.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size == 0 || int64(int(size)) != size {
		return nil, nil, errNoMap
	}
	flags := syscall.MAP_SHARED
	if size <= populateBelow {
		// Map the pages up front (one call instead of a fault per few
		// pages): files this small are read whole anyway.
		flags |= mapPopulate
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, flags)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}

// dupFile returns a new descriptor of the open file f (which may be
// unlinked), closed independently of f.
func dupFile(f *os.File) (*os.File, error) {
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), f.Name()), nil
}
