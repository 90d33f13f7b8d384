// Package backend chooses the linear algebra that gonum (and so every
// solver) computes with: pure Go by default, OpenBLAS through
// gonum.org/v1/netlib when built with -tags openblas (make does so whenever
// scripts/setup.sh has installed libopenblas-dev).
// Importing the package for its side effect selects the backend.
package backend

import (
	"runtime"
	"sync"
)

// Name says which backend this binary computes with.
func Name() string { return name }

// Accelerated reports whether an optimised BLAS is in use.
func Accelerated() bool { return accelerated }

// Kernel names the CPU kernels the backend computes with: OpenBLAS's
// core name ("Haswell", "Zen", "SkylakeX", …, which OpenBLAS picks per
// CPU or from OPENBLAS_CORETYPE; their floating-point results differ in
// the last bits), "" for pure Go.
func Kernel() string { return kernel() }

// Parallel calls fn(i) for i = 0..n−1 on up to GOMAXPROCS goroutines, each
// taking the next index, and returns when all are done. fn must be safe
// to run concurrently for different i. (The OpenBLAS backend computes on
// the calling thread: this is how dpfeat uses several cores.)
func Parallel(n int, fn func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= n {
					return
				}
				fn(k)
			}
		}()
	}
	wg.Wait()
}

// Ordered calls prepare(0), prepare(1), … in order on the calling goroutine
// and runs the work each returns (nil: none) on up to GOMAXPROCS
// goroutines. At most that
// many works run or wait at a time: prepare waits for one to finish, which
// bounds the memory they hold. Work that must happen in order (drawing
// noise from one generator) goes in prepare, the heavy part in the work.
func Ordered(n int, prepare func(i int) (work func())) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := 0; i < n; i++ {
			if w := prepare(i); w != nil {
				w()
			}
		}
		return
	}
	slots := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		slots <- struct{}{}
		w := prepare(i)
		if w == nil {
			<-slots
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			w()
		}()
	}
	wg.Wait()
}

// MirrorUpper copies the upper triangle of the n×n row-major matrix a
// into its lower triangle, in 32×32 tiles: an untiled column walk misses
// the cache on every write once a row no longer fits (100 class Grams at
// n = 512 took 0.2 s of CPU that way).
func MirrorUpper(a []float64, n int) {
	const tile = 32
	for i0 := 0; i0 < n; i0 += tile {
		for j0 := i0; j0 < n; j0 += tile {
			for i := i0; i < min(i0+tile, n); i++ {
				for j := max(j0, i+1); j < min(j0+tile, n); j++ {
					a[j*n+i] = a[i*n+j]
				}
			}
		}
	}
}
