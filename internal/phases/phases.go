// Package phases times the long phases of a run — wall clock and the
// process's CPU time in each, so that CPU/wall says how many cores a phase
// kept busy — for benchmarks and profiling. It is off unless main enables
// it (DPFEAT_PHASES=1); then Report prints one line per phase.
//
// Timings are not private releases: a phase's duration can depend on the
// data (a class's size sets its share of the work). They go to stderr
// only when asked for, like a CPU profile, and are for the person running
// the benchmark, not for publication with a model.
package phases

import (
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"
)

var (
	mu      sync.Mutex
	enabled bool
	order   []string
	totals  = map[string]*total{}
)

type total struct {
	wall, cpu time.Duration
	count     int
}

// Enable switches timing on.
func Enable() {
	mu.Lock()
	enabled = true
	mu.Unlock()
}

// On reports whether timing is on.
func On() bool {
	mu.Lock()
	defer mu.Unlock()
	return enabled
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Start begins timing the named phase and returns the function that ends
// it; phases of the same name add up. With timing off both are free.
func Start(name string) (stop func()) {
	if !On() {
		return func() {}
	}
	w0, c0 := time.Now(), cpuNow()
	return func() { Add(name, time.Since(w0), cpuNow()-c0) }
}

// Add records wall and CPU time for the named phase.
func Add(name string, wall, cpu time.Duration) {
	mu.Lock()
	defer mu.Unlock()
	if !enabled {
		return
	}
	t := totals[name]
	if t == nil {
		t = &total{}
		totals[name] = t
		order = append(order, name)
	}
	t.wall += wall
	t.cpu += cpu
	t.count++
}

// Report writes one line per phase, in the order they first ran: wall
// seconds, CPU seconds and their ratio (the cores kept busy).
func Report(w io.Writer) {
	mu.Lock()
	defer mu.Unlock()
	for _, name := range order {
		t := totals[name]
		ratio := 0.0
		if t.wall > 0 {
			ratio = t.cpu.Seconds() / t.wall.Seconds()
		}
		fmt.Fprintf(w, "phase %-24s wall %8.3f s  cpu %8.3f s  cpu/wall %.2f\n", name, t.wall.Seconds(), t.cpu.Seconds(), ratio)
	}
}

// Split times a loop as two phases: its body's parts (Inner) under one
// name, the rest of the loop — reading the next block, typically — under
// another, when Done is called.
type Split struct {
	outer, inner string
	w0           time.Time
	c0           time.Duration
	iw, ic       time.Duration
	on           bool
}

// NewSplit starts timing a loop.
func NewSplit(outer, inner string) *Split {
	s := &Split{outer: outer, inner: inner, on: On()}
	if s.on {
		s.w0, s.c0 = time.Now(), cpuNow()
	}
	return s
}

// Inner times one part of the body; call the result when it ends.
func (s *Split) Inner() func() {
	if !s.on {
		return func() {}
	}
	w0, c0 := time.Now(), cpuNow()
	return func() {
		s.iw += time.Since(w0)
		s.ic += cpuNow() - c0
	}
}

// Done records both phases.
func (s *Split) Done() {
	if !s.on {
		return
	}
	w, c := time.Since(s.w0), cpuNow()-s.c0
	Add(s.inner, s.iw, s.ic)
	Add(s.outer, w-s.iw, c-s.ic)
}
