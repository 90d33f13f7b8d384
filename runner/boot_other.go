//go:build !linux

package runner

import "syscall"

// childOf: only Linux can tie a child's life to its parent's; elsewhere
// the worker ends when the runner closes its control connection.
func childOf() *syscall.SysProcAttr { return nil }

// dieWithParent: only Linux can tie a process's life to its parent's.
func dieWithParent() {}
