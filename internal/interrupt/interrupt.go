// Package interrupt says what a Ctrl-C may cost: main asks it, on the
// first signal, whether the command is in work that notices the request
// and saves its progress (an extraction's record batches, a sweep's
// journal, a training checkpoint) — then it waits for that work to stop
// at its next safe point — or not, and then the process quits at once:
// work that cannot notice (blocked opening a FIFO, inside a library call)
// would only hold the user up until the grace period ends.
//
// Quitting at once must leave nothing this run created half-made: files
// and folders a run makes for a moment (temporary files beside an output,
// a copy of standard input, a conversion's folder) are registered here
// and removed before the process quits.
package interrupt

import (
	"os"
	"sync"
)

var (
	mu        sync.Mutex
	observers int
	temps     = map[int]string{}
	next      int
)

// Observe marks the start of work that notices its context's
// cancellation and saves what it did; done marks its end.
func Observe() (done func()) {
	mu.Lock()
	observers++
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			observers--
			mu.Unlock()
		})
	}
}

// Observed reports whether such work is under way.
func Observed() bool {
	mu.Lock()
	defer mu.Unlock()
	return observers > 0
}

// Temporary registers a file or folder this run created and will remove
// itself, so that a process quitting at once removes it too; forget
// unregisters it (call it once the path is removed or published).
func Temporary(path string) (forget func()) {
	mu.Lock()
	id := next
	next++
	temps[id] = path
	mu.Unlock()
	return func() {
		mu.Lock()
		delete(temps, id)
		mu.Unlock()
	}
}

// RemoveTemporaries removes every registered path: main calls it before
// the process quits at once.
func RemoveTemporaries() {
	mu.Lock()
	defer mu.Unlock()
	for id, p := range temps {
		os.RemoveAll(p) // registered by the code that created it in this run
		delete(temps, id)
	}
}
