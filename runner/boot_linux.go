package runner

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// childOf makes the worker die with its boot loader: a runner stops a
// PROCESS worker by killing the command it started.
func childOf() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// dieWithParent ends the boot loader with the job server that started it
// (a job server killed outright does not stop its PROCESS workers), and
// with it its worker (childOf).
func dieWithParent() { unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0) }
