// Command dpfeat trains differentially private image classifiers on the
// features of frozen encoders. See README.md and `dpfeat --help`.
//
// For profiling, DPFEAT_CPUPROFILE=FILE writes a CPU profile of the run
// (read it with `go tool pprof bin/dpfeat FILE`).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/dpfeat/dpfeat/cli"
)

func main() {
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	pprof.StopCPUProfile()
	os.Exit(code)
}
