package runner

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/atomicfile"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/train"
)

// StatsJob is one pass of sufficient statistics over a dataset's shards.
type StatsJob struct {
	// Shards are the feature files (a manifest's, or one file).
	Shards []string `json:"shards"`
	// Import says how to read them (the fit's --import flags).
	Import features.ImportOptions `json:"import"`
	// Classes is the number of classes; Options what to accumulate and how
	// each row is bounded first.
	Classes int                  `json:"classes"`
	Options solvers.StatsOptions `json:"options"`
	// Result is the file the combined statistics are written to (a path
	// the driver reads back: local for Prism, shared for remote runners).
	Result  string `json:"result"`
	Workers int    `json:"workers"`
}

// Accumulator returns a solvers.Options.Accumulate hook that computes a
// one-pass method's statistics of the dataset at path (a shard manifest,
// or one feature file) on the runner, one pipeline per pass: each shard's
// solvers.Accumulate (every row bounded there, as on one machine), added
// up by a combiner, written to a file in tmp that the driver reads back.
// A multi-view dataset is refused: its examples' rows may span shards.
func Accumulator(path string, imp features.ImportOptions, tmp string, o Options) (func(ctx context.Context, m int, opt solvers.StatsOptions) (*solvers.Stats, error), error) {
	shards, err := shardPaths(path, imp, o)
	if err != nil {
		return nil, err
	}
	pass := 0
	return func(ctx context.Context, m int, opt solvers.StatsOptions) (*solvers.Stats, error) {
		pass++
		job := StatsJob{Shards: shards, Import: imp, Classes: m, Options: opt, Workers: o.Workers,
			Result: filepath.Join(tmp, fmt.Sprintf("dpfeat-stats-%d-%d.gob", os.Getpid(), pass))}
		defer os.Remove(job.Result)
		return Accumulate(ctx, job, o)
	}, nil
}

// shardPaths lists the files of the dataset at path (a manifest's shards,
// or the one file), refusing a multi-view dataset.
func shardPaths(path string, imp features.ImportOptions, o Options) ([]string, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	f, err := features.Open(path, features.ReadOptions{Import: imp})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Views() != nil {
		return nil, fmt.Errorf("%s is multi-view: its examples' rows may span shards, which --runner does not group yet; fit it without --runner", path)
	}
	m, err := features.ReadShardManifest(path)
	if err != nil {
		return []string{path}, nil
	}
	var shards []string
	for _, s := range m.Shards {
		shards = append(shards, filepath.Join(filepath.Dir(path), s.Path))
	}
	return shards, nil
}

// Accumulate runs one pass: the shards' statistics, combined, read back.
func Accumulate(ctx context.Context, job StatsJob, o Options) (*solvers.Stats, error) {
	cfg, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	b, err := combineShards(ctx, o, job.Shards, &shardStatsFn{Job: string(cfg)}, addStats, job.Result)
	if err != nil {
		return nil, err
	}
	return decodeStats(b)
}

// combineShards runs one pipeline: fn over every shard (each emitting its
// part of a sum, encoded), add combining the parts, the sum written to
// result; it returns the sum's bytes.
func combineShards(ctx context.Context, o Options, shards []string, fn, add any, result string) ([]byte, error) {
	p, s := pipeline()
	parts := beam.ParDo(s, fn, beam.Reshuffle(s, beam.CreateList(s, shards)))
	beam.ParDo0(s, &writeStatsFn{Path: result}, beam.Combine(s, add, parts))
	if err := execute(ctx, p, o); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(result)
	if err != nil {
		return nil, fmt.Errorf("the pipeline's result: %w", err)
	}
	return b, nil
}

// shardStatsFn emits a shard's statistics (gob).
type shardStatsFn struct {
	Job string
	job StatsJob
}

func (f *shardStatsFn) Setup() error { return json.Unmarshal([]byte(f.Job), &f.job) }

func (f *shardStatsFn) ProcessElement(ctx context.Context, path string, emit func([]byte)) error {
	release := acquire(f.job.Workers)
	defer release()
	file, err := features.Open(path, features.ReadOptions{Import: f.job.Import})
	if err != nil {
		return err
	}
	defer file.Close()
	st, err := solvers.Accumulate(ctx, train.FileRows(file), f.job.Classes, f.job.Options)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	b, err := encodeStats(st)
	if err != nil {
		return err
	}
	emit(b)
	return nil
}

// addStats is the combiner: the sum of two shards' (or partial sums')
// statistics.
func addStats(a, b []byte) ([]byte, error) {
	x, err := decodeStats(a)
	if err != nil {
		return nil, err
	}
	y, err := decodeStats(b)
	if err != nil {
		return nil, err
	}
	if err := x.Add(y); err != nil {
		return nil, err
	}
	return encodeStats(x)
}

// writeStatsFn writes the combined statistics where the driver reads them.
type writeStatsFn struct{ Path string }

func (f *writeStatsFn) ProcessElement(b []byte) error { return atomicfile.WriteBytes(f.Path, b) }

func encodeStats(st *solvers.Stats) ([]byte, error) {
	var buf bytes.Buffer
	err := gob.NewEncoder(&buf).Encode(st)
	return buf.Bytes(), err
}

func decodeStats(b []byte) (*solvers.Stats, error) {
	var st solvers.Stats
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&st); err != nil {
		return nil, fmt.Errorf("statistics: %w", err)
	}
	if st.ClassGram == nil {
		st.ClassGram = map[int][]float64{}
	}
	return &st, nil
}

func init() {
	register.DoFn3x1[context.Context, string, func([]byte), error](&shardStatsFn{})
	register.DoFn1x1[[]byte, error](&writeStatsFn{})
	register.Function2x2(addStats)
	register.Emitter1[[]byte]()
	beam.RegisterType(reflect.TypeOf((*shardStatsFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*writeStatsFn)(nil)).Elem())
}
