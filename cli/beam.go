//go:build !nobeam

package cli

import (
	"context"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/runner"
	"github.com/dpfeat/dpfeat/runner/spec"
	"github.com/dpfeat/dpfeat/solvers"
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
