//go:build linux

package bigmem

import (
	"syscall"
	"unsafe"
)

const hugePage = 2 << 20

func bytesOf(s []float64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*8)
}

// adviseHuge asks for huge pages on the 2 MiB-aligned interior of b
// (MADV_HUGEPAGE, a hint: errors are ignored).
func adviseHuge(b []byte) {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (base + hugePage - 1) &^ (hugePage - 1)
	end := (base + uintptr(len(b))) &^ (hugePage - 1)
	if end > start {
		_ = syscall.Madvise(b[start-base:end-base], syscall.MADV_HUGEPAGE)
	}
}

func bytesOf32(s []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*4)
}
