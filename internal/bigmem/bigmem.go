// Package bigmem allocates large float slices whose pages the kernel may
// back with transparent huge pages.
//
// On a virtual machine every first touch of a 4 KiB page is a fault that
// costs microseconds: a 60 MB float64 copy of a feature matrix takes 15,000
// of them, which profiling showed to be about half of a 30000×256 DP-FC
// fit. Where transparent huge pages are enabled in "madvise" mode, asking
// for them on the slice turns those into a few dozen 2 MiB faults.
package bigmem

// threshold is the size below which the hint is not worth a system call.
const threshold = 4 << 20

// Float64s returns a zeroed []float64 of length n.
func Float64s(n int) []float64 {
	s := make([]float64, n)
	if n*8 >= threshold {
		adviseHuge(bytesOf(s))
	}
	return s
}

// Float32s returns a zeroed []float32 of length n.
func Float32s(n int) []float32 {
	s := make([]float32, n)
	if n*4 >= threshold {
		adviseHuge(bytesOf32(s))
	}
	return s
}
