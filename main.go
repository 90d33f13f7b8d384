// Command dpfeat trains differentially private image classifiers on the
// features of frozen encoders. See README.md and `dpfeat --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/dpfeat/dpfeat/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
