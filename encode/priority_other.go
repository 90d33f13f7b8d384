//go:build !linux

package encode

// background does nothing where thread priorities are not set per thread.
func background() {}
