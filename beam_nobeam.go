//go:build nobeam

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/dpfeat/dpfeat/runner/spec"
)

// beamBinary is the Beam build's name beside this one.
const beamBinary = "dpfeat-beam"

// beamMain hands a command with --runner, or a worker start, to
// dpfeat-beam beside this binary (the process is replaced: same
// arguments, environment, standard streams and exit status); it returns
// false for every other command, and exits with one line when the Beam
// build is not there.
func beamMain(args []string) bool {
	if !spec.IsWorker(args[1:]) && !usesRunner(args[1:]) {
		return false
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	bin := filepath.Join(filepath.Dir(self), beamBinary)
	if err == nil {
		if _, err = os.Stat(bin); err == nil {
			err = syscall.Exec(bin, append([]string{bin}, args[1:]...), os.Environ())
		}
	}
	fmt.Fprintf(os.Stderr, "dpfeat: --runner and object-storage paths run in %s, beside this binary (make build writes it; make install copies it): %v\n", bin, err)
	os.Exit(1)
	return true
}
