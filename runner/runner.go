package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	"github.com/dpfeat/dpfeat/internal/tmpdir"
	"github.com/dpfeat/dpfeat/runner/spec"
)

// Runners are the Beam runners dpfeat runs on (spec.Runners).
var Runners = spec.Runners

// Options choose the runner (spec.Options).
type Options = spec.Options

// Check validates the options: spec's checks, and that every flag is a
// Beam pipeline option of this build.
func Check(o Options) error {
	if err := o.Check(); err != nil {
		return err
	}
	for k := range o.Flags {
		if flag.Lookup(k) == nil {
			return fmt.Errorf("%q is not a Beam pipeline option of this build (e.g. endpoint, environment_type, environment_config, project, region, temp_location)", k)
		}
	}
	return nil
}

// IsWorker reports whether the process was started as a Beam worker
// (spec.IsWorker).
func IsWorker(args []string) bool { return spec.IsWorker(args) }

// Worker runs this binary as a Beam worker harness (its flags are the boot
// code's), or as a PROCESS environment's boot loader (Boot), and exits.
func Worker(args []string) {
	if spec.IsBoot(args) {
		os.Exit(Boot(args))
	}
	flag.Parse()
	beam.Init()
	// beam.Init returns only when the harness did not start (no --worker).
	fmt.Println("dpfeat: not started as a Beam worker")
}

var initOnce sync.Once

// pipeline starts a pipeline (Beam initialised once per process). Beam's
// and Prism's logs (log/slog, which beam.Init points at stderr) are not
// shown: a failed job's cause comes back as the run's error, which the
// command prints in one line, and a Ctrl-C printed some 17 lines of them,
// one per bundle of the job cancelled. DPFEAT_BEAM_LOG=info (or debug,
// warn, error) shows them, for a runner's diagnostics.
func pipeline() (*beam.Pipeline, beam.Scope) {
	initOnce.Do(func() {
		level := os.Getenv("DPFEAT_BEAM_LOG")
		if level != "" {
			beamlog.LogLevel = level
		}
		beam.Init()
		if level == "" {
			slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
		}
	})
	return beam.NewPipelineWithRoot()
}

// execute runs a pipeline on the chosen runner; one at a time per
// process (Beam's options are process-wide flags).
//
// Workers that are processes (any runner given an endpoint, or not run in
// loopback) run this binary: dpfeat is its own worker (IsWorker), so Beam
// never tries to cross-compile one from sources that are not here. Beam's
// own temporary files (the loopback run leaves an empty placeholder in the
// temporary directory each time) go to a folder of their own (tmpdir).
func execute(ctx context.Context, p *beam.Pipeline, o Options) error {
	runMu.Lock()
	defer runMu.Unlock()
	if ep := o.Flags["endpoint"]; ep != "" {
		// Beam waits two minutes for a job server that is not there.
		conn, err := net.DialTimeout("tcp", ep, 5*time.Second)
		if err != nil {
			return fmt.Errorf("%s: no job server answers at endpoint %s (%v)", o.Name(), ep, err)
		}
		conn.Close()
	}
	flags := map[string]string{}
	maps.Copy(flags, o.Flags)
	if _, given := flags["worker_binary"]; !given {
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
			if _, local := flags["endpoint"]; local || o.Name() != "prism" {
				return fmt.Errorf("%s: workers run a linux/amd64 dpfeat; name one with --runner-option worker_binary=PATH", o.Name())
			}
		} else if self, err := os.Executable(); err == nil {
			flags["worker_binary"] = self
		}
	}
	// Beam's options are process-wide flags: each is set for this run and
	// restored after it, so that one run's endpoint is not the next one's
	// (an in-process run after one aimed at a dead endpoint waited for it).
	for k, v := range flags {
		old := flag.Lookup(k).Value.String()
		if err := flag.Set(k, v); err != nil {
			return fmt.Errorf("Beam option %s=%s: %w", k, v, err)
		}
		defer flag.Set(k, old)
	}
	return tmpdir.Contain("dpfeat-beam-", func() error {
		if _, err := beam.Run(ctx, o.Name(), p); err != nil {
			err = fmt.Errorf("%s: %s%w", o.Name(), cause(err, o.Flags["endpoint"]), err)
			if lostWorker(err) {
				err = &workerLost{err}
			}
			return err
		}
		return nil
	})
}

// workerLost marks a job that failed because a worker process stopped
// mid-bundle (retried by retryLost).
type workerLost struct{ error }

func (e *workerLost) Unwrap() error { return e.error }

func lostWorker(err error) bool { return strings.Contains(err.Error(), "SDK worker disconnected") }

// lostRetries is how many times retryLost runs a job again.
const lostRetries = 2

// retryLost runs job, and runs it again — up to lostRetries times — when
// it fails because a worker process was lost mid-bundle (killed, crashed,
// out of memory, its machine gone): what Flink, Spark and Dataflow do for
// a failed bundle and Prism does not. Each job is a pure function of its
// input (a shard's features; a pass's exact sum, computed before the
// driver adds any noise), so a rerun gives the same result and releases
// nothing. what names the job in the line printed before each retry.
func retryLost(ctx context.Context, what string, job func() error) error {
	for attempt := 1; ; attempt++ {
		err := job()
		var lost *workerLost
		if err == nil || !errors.As(err, &lost) || ctx.Err() != nil {
			return err
		}
		if attempt > lostRetries {
			return fmt.Errorf("%w [run %d times]", err, attempt)
		}
		fmt.Fprintf(os.Stderr, "dpfeat: a worker process stopped mid-bundle; running %s again (retry %d of %d)\n", what, attempt, lostRetries)
	}
}

// cause names, ahead of Beam's own chain of messages, the two failures a
// cluster has that one process does not: the job server gone, and a
// worker process lost mid-bundle ("" for any other error).
func cause(err error, endpoint string) string {
	s := err.Error()
	switch {
	case endpoint != "" && strings.Contains(s, "code = Unavailable"):
		return "the job server at " + endpoint + " went away or stopped answering; "
	case lostWorker(err):
		return "a worker process stopped mid-bundle (killed, crashed or out of memory; Prism fails the job rather than retry the bundle,); "
	}
	return ""
}

var runMu sync.Mutex

// slots bounds the shards a worker process handles at once: Workers of
// the options the DoFn carries, or its cores.
type slots struct {
	once sync.Once
	c    chan struct{}
}

var workerSlots slots

func acquire(workers int) func() {
	workerSlots.once.Do(func() {
		n := workers
		if n <= 0 {
			n = runtime.GOMAXPROCS(0)
		}
		workerSlots.c = make(chan struct{}, n)
	})
	workerSlots.c <- struct{}{}
	return func() { <-workerSlots.c }
}
