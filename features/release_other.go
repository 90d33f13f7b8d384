//go:build !linux

package features

// releasePages is a no-op where MADV_DONTNEED's semantics for shared file
// mappings are not the Linux ones.
func releasePages([]byte, []float32) {}
