// Package backend chooses the linear algebra that gonum (and so every
// solver) computes with: pure Go by default, OpenBLAS through
// gonum.org/v1/netlib when built with -tags openblas (make does so whenever
// scripts/setup.sh has installed libopenblas-dev).
// Importing the package for its side effect selects the backend.
package backend

// Name says which backend this binary computes with.
func Name() string { return name }

// Accelerated reports whether an optimised BLAS is in use.
func Accelerated() bool { return accelerated }
