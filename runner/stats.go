package runner

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/solvers"
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

// Accumulate runs one pass: the shards' statistics, combined, read back.
func Accumulate(ctx context.Context, job StatsJob, o Options) (*solvers.Stats, error) {
	cfg, err := json.Marshal(shardJob{Import: job.Import, Workers: job.Workers, Stats: &statsPart{Classes: job.Classes, Options: job.Options}})
	if err != nil {
		return nil, err
	}
	b, err := combineShards(ctx, o, job.Shards, &shardSumFn{Job: string(cfg)}, addStats, job.Result)
	if err != nil {
		return nil, err
	}
	return decodeStats(b)
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
	register.Function2x2(addStats)
}
