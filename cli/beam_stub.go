//go:build nobeam

package cli

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/runner/spec"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/sweep"
)

// errNoBeam is what the nobeam build says of --runner: main hands such
// commands to dpfeat-beam before they reach here, so this is seen only
// when that binary is missing and the command ran in-process anyway.
var errNoBeam = errors.New("this dpfeat is built without Apache Beam (-tags nobeam): --runner runs in dpfeat-beam, which `make build` puts beside it")

func checkRunner(spec.Options) error { return errNoBeam }

func remoteFit(string, features.ImportOptions, string, spec.Options) (solvers.Remote, error) {
	return nil, errNoBeam
}

func extractOnRunner(context.Context, spec.ExtractJob, spec.Options) (*spec.ExtractResult, error) {
	return nil, errNoBeam
}

func serveJobs(context.Context, int, time.Duration, io.Writer, func(string)) error { return errNoBeam }

func sweepOnRunner(context.Context, spec.SweepJob, []sweep.JobRef, spec.Options, func(sweep.Row) error) error {
	return errNoBeam
}
