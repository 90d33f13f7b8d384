// Command dpfeat trains differentially private image classifiers on the
// features of frozen encoders. See README.md and `dpfeat --help`.
//
// For profiling, DPFEAT_CPUPROFILE=FILE writes a CPU profile of the run
// (read it with `go tool pprof bin/dpfeat FILE`), and DPFEAT_PHASES=1
// prints the wall and CPU seconds of each long phase (reading,
// accumulation, noise, factorisation, …) to stderr at exit.
//
// Signals: on the first Ctrl-C (or SIGTERM), a command in work that saves
// its progress (an extraction, a sweep, training; package interrupt) is
// asked to stop at its next safe point — partial outputs are kept for
// --resume — and the process quits anyway if it is still busy after a
// grace period (DPFEAT_STOP_GRACE, default 10s): work blocked in a read
// (a FIFO) or in a library call (BLAS, ONNX Runtime) cannot notice the
// request. Any other command quits at once, as does a second signal;
// either way the temporary files of the run are removed first, and the
// exit status is 128 + the signal.
//
// Started with --worker by an Apache Beam runner's container boot, the
// binary is a worker of the pipelines extract and fit build with --runner
// (package runner).
//
// Built with the nobeam tag (make build's bin/dpfeat), the binary does not
// link Apache Beam, which made every command start 2.5 times slower: a
// command with --runner, and a worker start, are handed to dpfeat-beam
// beside it (the default build, make build's bin/dpfeat-beam) with the
// same arguments, environment and standard streams (beam_nobeam.go).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/dpfeat/dpfeat/cli"
	"github.com/dpfeat/dpfeat/internal/interrupt"
	"github.com/dpfeat/dpfeat/internal/phases"
)

func main() {
	if beamMain(os.Args) {
		return
	}
	if path := os.Getenv("DPFEAT_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "dpfeat: DPFEAT_CPUPROFILE=%s: %v\n", path, err)
			os.Exit(1)
		}
		defer f.Close()
	}
	if os.Getenv("DPFEAT_PHASES") != "" {
		phases.Enable()
	}
	grace := 10 * time.Second
	if s := os.Getenv("DPFEAT_STOP_GRACE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			fmt.Fprintf(os.Stderr, "dpfeat: DPFEAT_STOP_GRACE=%s: expected a duration such as 10s\n", s)
			os.Exit(1)
		}
		grace = d
	}
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		// The line goes out before the cancel: once cancelled, the
		// command may return and the process exit before it is written
		// (a clean-clone CI run once saw the interrupted line alone).
		observed := interrupt.Observed()
		if !observed {
			// Nothing under way saves progress: waiting would only
			// hold the user up (a read blocked on a FIFO never returns).
			fmt.Fprintln(os.Stderr, "dpfeat: stopped")
		} else {
			fmt.Fprintln(os.Stderr, "dpfeat: stopping at the next safe point (signal again to quit at once)")
		}
		cancel()
		if observed {
			select {
			case s = <-sigs:
				fmt.Fprintln(os.Stderr, "dpfeat: quitting at once")
			case <-time.After(grace):
				fmt.Fprintf(os.Stderr, "dpfeat: still busy %s after the signal (blocked in a read or a library call): quitting\n", grace)
			}
		}
		interrupt.RemoveTemporaries()
		pprof.StopCPUProfile()
		code := 130
		if s == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
	code := cli.Run(ctx, os.Args, os.Stdout, os.Stderr)
	signal.Stop(sigs)
	pprof.StopCPUProfile()
	phases.Report(os.Stderr)
	os.Exit(code)
}
