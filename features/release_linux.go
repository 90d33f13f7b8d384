//go:build linux

package features

import (
	"syscall"
	"unsafe"
)

// releasePages tells the kernel that the whole pages of the read-only,
// shared file map data that lie inside used are not needed by this process
// any more (MADV_DONTNEED). For a shared file mapping this only unmaps the
// pages from the process: their contents are the file's, and a later
// access faults them back in. Nothing happens when used is not in data.
func releasePages(data []byte, used []float32) {
	if len(data) == 0 || len(used) == 0 {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(used)))
	hi := lo + uintptr(len(used))*4
	if lo < base || hi > base+uintptr(len(data)) {
		return
	}
	page := uintptr(syscall.Getpagesize())
	start := (lo - base + page - 1) / page * page
	end := (hi - base) / page * page
	if end > start {
		_ = syscall.Madvise(data[start:end], syscall.MADV_DONTNEED)
	}
}
