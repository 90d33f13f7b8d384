//go:build !nobeam

package main

import "github.com/dpfeat/dpfeat/runner"

// beamMain runs the process as a Beam worker when a runner's container
// boot started it as one (--worker) of a pipeline this binary built
// (extract/fit --runner), and reports whether it did.
func beamMain(args []string) bool {
	if !runner.IsWorker(args[1:]) {
		return false
	}
	runner.Worker(args[1:])
	return true
}
