package encode

import (
	"runtime"
	"syscall"
)

// background pins the calling goroutine to its own OS thread and lowers
// that thread's priority (nice 10), so that the pipeline's decoding and
// preprocessing take the cycles ONNX Runtime's threads leave (at their
// barriers, between batches) instead of preempting one of them, which
// keeps the others waiting. The goroutine must not unlock the thread: when
// it returns the thread ends with it, and no other goroutine inherits the
// lowered priority.
func background() {
	runtime.LockOSThread()
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 10)
}
