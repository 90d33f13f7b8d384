//go:build !nobeam

package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/runner"
	"github.com/dpfeat/dpfeat/runner/spec"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/sweep"
)

// The --runner commands' backend: Apache Beam (package runner), linked
// into this build. The nobeam build (beam_stub.go) leaves it out and hands
// those commands to dpfeat-beam (main).

// checkRunner checks the runner options, Beam's flags included.
func checkRunner(o spec.Options) error { return runner.Check(o) }

// remoteFit runs a fit's passes over the shards of path on the runner.
func remoteFit(path string, imp features.ImportOptions, tmp string, o spec.Options) (solvers.Remote, error) {
	return runner.NewFit(path, imp, tmp, o)
}

// extractOnRunner runs a distributed extraction.
func extractOnRunner(ctx context.Context, job spec.ExtractJob, o spec.Options) (*spec.ExtractResult, error) {
	return runner.Extract(ctx, job, o)
}

// sweepOnRunner runs a sweep's jobs on the runner (runner.Sweep).
func sweepOnRunner(ctx context.Context, job spec.SweepJob, refs []sweep.JobRef, o spec.Options, record func(sweep.Row) error) error {
	return runner.Sweep(ctx, job, refs, o, record)
}

// serveJobs runs a standalone job server (runner.JobServer) until ctx
// ends; Prism's log goes to logTo at DPFEAT_BEAM_LOG's level (warnings
// and errors by default).
func serveJobs(ctx context.Context, port int, idle time.Duration, logTo io.Writer, ready func(string)) error {
	level := slog.LevelWarn
	if s := os.Getenv("DPFEAT_BEAM_LOG"); s != "" {
		if err := level.UnmarshalText([]byte(s)); err != nil {
			return userErrorf("DPFEAT_BEAM_LOG=%s: expected debug, info, warn or error", s)
		}
	}
	log := slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: level}))
	if err := (runner.JobServer{Port: port, Idle: idle, Log: log}).Serve(ctx, ready); err != nil {
		return userErrorf("job-server: %v", err)
	}
	return nil
}
