package runner

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"
)

// Runners are the Beam runners dpfeat runs on.
var Runners = []string{"prism", "flink", "spark", "dataflow", "universal"}

// Options choose the runner.
type Options struct {
	// Runner is one of Runners ("": prism).
	Runner string
	// Flags are Beam pipeline options by name (endpoint, environment_type,
	// environment_config, project, region, temp_location, …), set before
	// the pipeline runs.
	Flags map[string]string
	// Workers bounds how many shards one worker process handles at once
	// (0: its cores): on Prism, this process, so 1 and 2 compare one
	// worker with two.
	Workers int
}

// Check validates the options.
func (o Options) Check() error {
	if o.Runner != "" && !slices.Contains(Runners, o.Runner) {
		return fmt.Errorf("runner %q; expected one of %s", o.Runner, strings.Join(Runners, ", "))
	}
	if o.Workers < 0 {
		return fmt.Errorf("workers %d; expected at least 1 (0: the cores)", o.Workers)
	}
	for k := range o.Flags {
		if flag.Lookup(k) == nil {
			return fmt.Errorf("%q is not a Beam pipeline option of this build (e.g. endpoint, environment_type, environment_config, project, region, temp_location)", k)
		}
	}
	return nil
}

// Name is the runner's name ("prism" by default).
func (o Options) Name() string {
	if o.Runner == "" {
		return "prism"
	}
	return o.Runner
}

// IsWorker reports whether the process was started as a Beam worker (the
// container boot's --worker flag): main then calls Worker instead of the
// command line.
func IsWorker(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == "--worker" || a == "--worker=true" || a == "-worker=true" })
}

// Worker runs this binary as a Beam worker harness (its flags are the boot
// code's) and exits.
func Worker() {
	flag.Parse()
	beam.Init()
	// beam.Init returns only when the harness did not start (no --worker).
	fmt.Println("dpfeat: not started as a Beam worker")
}

var initOnce sync.Once

// pipeline starts a pipeline (Beam initialised once per process; its
// job-progress lines are logged at info level, which a command's output
// does not need: warnings and errors still show).
func pipeline() (*beam.Pipeline, beam.Scope) {
	initOnce.Do(func() {
		beamlog.LogLevel = "warn"
		beam.Init()
	})
	return beam.NewPipelineWithRoot()
}

// execute runs a pipeline on the chosen runner; one at a time per
// process (Beam's options are process-wide flags).
func execute(ctx context.Context, p *beam.Pipeline, o Options) error {
	runMu.Lock()
	defer runMu.Unlock()
	for k, v := range o.Flags {
		if err := flag.Set(k, v); err != nil {
			return fmt.Errorf("Beam option %s=%s: %w", k, v, err)
		}
	}
	if _, err := beam.Run(ctx, o.Name(), p); err != nil {
		return fmt.Errorf("%s: %w", o.Name(), err)
	}
	return nil
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
