//go:build nobeam

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	fmt.Fprintf(os.Stderr, "dpfeat: --runner runs in %s, beside this binary (make build writes it; make install copies it): %v\n", bin, err)
	os.Exit(1)
	return true
}

// usesRunner reports whether a command line asks for a runner (--runner
// NAME or --runner=NAME, before a "--") or is the job server.
func usesRunner(args []string) bool {
	if len(args) > 0 && args[0] == "job-server" {
		return true
	}
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--runner" || a == "-runner" || strings.HasPrefix(a, "--runner=") || strings.HasPrefix(a, "-runner=") {
			return true
		}
	}
	return false
}
