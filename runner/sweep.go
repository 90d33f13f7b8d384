package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dpfeat/dpfeat/internal/atomicfile"
	"github.com/dpfeat/dpfeat/runner/spec"
	"github.com/dpfeat/dpfeat/sweep"
)

// SweepJob is package spec's: a sweep on a runner, without Beam.
type SweepJob = spec.SweepJob

// Sweep runs the jobs refs name on the runner (sweep.RunOptions.Remote):
// one element per job, reshuffled so that the runner spreads them over its workers,
// each running its jobs with a sweep.JobRunner. Each finished row is
// written to job.Rows and handed to record (in this process) within about
// half a second, while the pipeline runs, so that the sweep's journal
// keeps it if the run is then interrupted.
func Sweep(ctx context.Context, job SweepJob, refs []sweep.JobRef, o Options, record func(sweep.Row) error) error {
	if !filepath.IsAbs(job.Config) || !filepath.IsAbs(job.Rows) {
		panic("runner: a sweep's configuration and rows folder must be absolute paths") // workers may run elsewhere
	}
	spec, err := json.Marshal(job)
	if err != nil {
		return err
	}
	elems := make([]string, len(refs))
	want := map[string]bool{}
	for i, r := range refs {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		elems[i], want[r.ID] = string(b), true
	}
	p, s := pipeline()
	done := beam.ParDo(s, &sweepJobFn{Job: string(spec)}, beam.Reshuffle(s, beam.CreateList(s, elems)))
	beam.ParDo0(s, discard, beam.Reshuffle(s, done))

	seen := map[string]bool{}
	collect := func() error {
		names, err := filepath.Glob(filepath.Join(job.Rows, "*.json"))
		if err != nil {
			return err
		}
		for _, name := range names {
			id := strings.TrimSuffix(filepath.Base(name), ".json")
			if seen[id] || !want[id] {
				continue
			}
			b, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			row, err := sweep.DecodeRow(b)
			if err != nil {
				return fmt.Errorf("job %s's row from the worker: %w", id, err)
			}
			seen[id] = true
			if err := record(row); err != nil {
				return err
			}
		}
		return nil
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var pollErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if err := collect(); err != nil {
					pollErr = err
					return
				}
			}
		}
	}()
	err = execute(ctx, p, o)
	close(stop)
	wg.Wait()
	if pollErr != nil {
		return pollErr
	}
	if cerr := collect(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if len(seen) != len(want) {
		return fmt.Errorf("%d of %d jobs sent back no row", len(want)-len(seen), len(want))
	}
	return nil
}

// sweepJobFn runs the jobs it is given; Job is the SweepJob's JSON.
type sweepJobFn struct {
	Job string
	job SweepJob
	run *sweep.JobRunner
}

// jobRunners keeps a worker process's job runners, one per sweep (its
// datasets loaded once for every bundle and DoFn instance).
var jobRunners = struct {
	sync.Mutex
	m map[string]*sweep.JobRunner
}{m: map[string]*sweep.JobRunner{}}

func (f *sweepJobFn) Setup() error {
	if err := json.Unmarshal([]byte(f.Job), &f.job); err != nil {
		return err
	}
	jobRunners.Lock()
	defer jobRunners.Unlock()
	if r := jobRunners.m[f.Job]; r != nil {
		f.run = r
		return nil
	}
	c, err := sweep.LoadConfigLimit(f.job.Config, f.job.MaxJobs)
	if err != nil {
		return err
	}
	if f.run, err = sweep.NewJobRunner(c, f.job.Version, f.job.Classifiers); err != nil {
		return err
	}
	jobRunners.m[f.Job] = f.run
	return nil
}

func (f *sweepJobFn) ProcessElement(ctx context.Context, elem string, emit func(string)) error {
	var ref sweep.JobRef
	if err := json.Unmarshal([]byte(elem), &ref); err != nil {
		return err
	}
	id := ref.ID
	release := acquire(f.job.Workers)
	defer release()
	row, err := f.run.Run(ctx, ref)
	if err != nil {
		return fmt.Errorf("sweep job %s: %w", id, err)
	}
	b, err := sweep.EncodeRow(row)
	if err != nil {
		return err
	}
	// Whole or not at all: a retried job overwrites its row the same way.
	if err := atomicfile.WriteBytes(filepath.Join(f.job.Rows, id+".json"), b); err != nil {
		return fmt.Errorf("sweep job %s's row: %w", id, err)
	}
	emit(id)
	return nil
}

func init() {
	register.DoFn3x1[context.Context, string, func(string), error](&sweepJobFn{})
	beam.RegisterType(reflect.TypeOf((*sweepJobFn)(nil)).Elem())
}
