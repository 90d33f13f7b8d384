//go:build !openblas

package backend

const (
	name        = "gonum (pure Go; build with -tags openblas, as make does when libopenblas-dev is installed, for OpenBLAS)"
	accelerated = false
)
