package runner

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/objstore"
	"github.com/dpfeat/dpfeat/preprocessing"
	"github.com/dpfeat/dpfeat/prototypes"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/train"
)

// A fit's passes over a dataset's shards: one pipeline per pass, each
// shard's part of a sum computed where the shard is read (every row's
// contribution bounded there), the parts added by a combiner and the sum
// written to a file the driver reads back.

// Fit runs a fit's passes over a dataset's shards on the runner: it is
// solvers.Options.Remote, Accumulate for the one-pass methods' statistics
// and Pass for each pass of an iterative method or a transform. Each pass
// is one pipeline whose sum is written to a file in tmp and read back by
// the driver, which adds the noise.
type Fit struct {
	shards []string
	// first is the index of each shard's first example in the dataset.
	first  map[string]int64
	imp    features.ImportOptions
	tmp    string
	o      Options
	passes int
}

var _ solvers.Remote = (*Fit)(nil)

// NewFit prepares the passes over the dataset at path (a shard manifest,
// or one feature file), refusing a multi-view dataset whose examples' rows
// span shards.
func NewFit(path string, imp features.ImportOptions, tmp string, o Options) (*Fit, error) {
	shards, first, err := shardPaths(path, imp, o)
	if err != nil {
		return nil, err
	}
	return &Fit{shards: shards, first: first, imp: imp, tmp: tmp, o: o}, nil
}

// Accumulate is solvers.Remote's: each shard's solvers.Accumulate (every
// row bounded there, as on one machine) of its rows through t, added up
// by the combiner.
func (f *Fit) Accumulate(ctx context.Context, m int, opt solvers.StatsOptions, t *preprocessing.Transform) (*solvers.Stats, error) {
	b, err := f.sum(ctx, shardJob{Stats: &statsPart{Classes: m, Options: opt}}, t, addStats)
	if err != nil {
		return nil, err
	}
	return decodeStats(b)
}

// Pass is solvers.Remote's: each shard's solvers.RunPass of its rows
// through t (with the index of its first example), added up by the
// combiner.
func (f *Fit) Pass(ctx context.Context, p solvers.Pass, t *preprocessing.Transform) ([]float64, error) {
	b, err := f.sum(ctx, shardJob{Pass: &p, First: f.first}, t, addVectors)
	if err != nil {
		return nil, err
	}
	return decodeVector(b)
}

// sum runs one pass of job over the shards' rows through t, add combining
// their parts.
func (f *Fit) sum(ctx context.Context, job shardJob, t *preprocessing.Transform, add any) ([]byte, error) {
	f.passes++
	job.Import, job.Workers = f.imp, f.o.Workers
	if t != nil {
		// gob: the transform's arrays are not in its JSON (a classifier
		// file stores them as tensors).
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(t); err != nil {
			return nil, err
		}
		job.Transform = buf.Bytes()
	}
	cfg, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	result := objstore.Join(f.tmp, fmt.Sprintf("dpfeat-pass-%d-%d", os.Getpid(), f.passes))
	defer objstore.Remove(context.WithoutCancel(ctx), result)
	return combineShards(ctx, f.o, f.shards, &shardSumFn{Job: string(cfg)}, add, result)
}

// shardPaths lists the files of the dataset at path (a manifest's shards,
// or the one file) and the index of each one's first example.
func shardPaths(path string, imp features.ImportOptions, o Options) ([]string, map[string]int64, error) {
	if err := Check(o); err != nil {
		return nil, nil, err
	}
	f, err := features.Open(path, features.ReadOptions{Import: imp})
	if err != nil {
		return nil, nil, err
	}
	views := f.Views() != nil
	f.Close()
	m, err := features.ReadShardManifest(path)
	if err != nil {
		return []string{path}, map[string]int64{path: 0}, nil
	}
	var shards []string
	for _, s := range m.Shards {
		shards = append(shards, features.ShardPath(path, s.Path))
	}
	if views {
		first, err := exampleStarts(path, shards, imp)
		return shards, first, err
	}
	// An example is a row: a shard's first example is the rows before
	// it, as the manifest, checked when the dataset was opened, counts
	// them.
	first := map[string]int64{}
	var rows int64
	for i, s := range m.Shards {
		first[shards[i]] = rows
		rows += s.Rows
	}
	return shards, first, nil
}

// exampleStarts returns the index of each shard's first example in a
// multi-view dataset. The solvers number examples in order of their first
// row (train.ExampleRows); when every example's rows lie in one shard, as
// extract --runner writes them, the shards' own numberings, one after the
// other, are the dataset's, and each shard groups its examples itself. (An
// example whose rows span two shards is refused when the manifest is
// opened: features' oneShardPerExample.)
func exampleStarts(path string, shards []string, imp features.ImportOptions) (map[string]int64, error) {
	first := map[string]int64{}
	var n int64
	for _, p := range shards {
		first[p] = n
		f, err := features.Open(p, features.ReadOptions{Import: imp})
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		err = f.Each(func(b features.Batch) error {
			for _, ex := range b.Examples {
				if !seen[ex] {
					seen[ex] = true
					n++
				}
			}
			return nil
		})
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return first, nil
}

// combineShards runs one pipeline: fn over every shard (each emitting its
// part of a sum, encoded), add combining the parts, the sum written to
// result; it returns the sum's bytes. A pass that loses a worker process
// runs again (retryLost): the sum is exact, and noise is added only to
// the one the driver reads.
func combineShards(ctx context.Context, o Options, shards []string, fn, add any, result string) ([]byte, error) {
	err := retryLost(ctx, "the pass", func() error {
		p, s := pipeline()
		parts := beam.ParDo(s, fn, beam.Reshuffle(s, beam.CreateList(s, shards)))
		beam.ParDo0(s, &writeResultFn{Path: result}, beam.Combine(s, add, parts))
		return execute(ctx, p, o)
	})
	if err != nil {
		return nil, err
	}
	b, err := objstore.ReadFile(ctx, result, maxResultBytes)
	if err != nil {
		return nil, fmt.Errorf("the pipeline's result: %w", err)
	}
	return b, nil
}

// shardJob is what every shard's part computes: the statistics of a
// one-pass method (Stats) or one pass (Pass), of its rows through
// Transform (a preprocessing.Transform, gob-encoded) when set. First
// gives each shard's first example's index.
type shardJob struct {
	Import    features.ImportOptions `json:"import"`
	Workers   int                    `json:"workers"`
	Stats     *statsPart             `json:"stats,omitempty"`
	Pass      *solvers.Pass          `json:"pass,omitempty"`
	Transform []byte                 `json:"transform,omitempty"`
	First     map[string]int64       `json:"first,omitempty"`
}

type statsPart struct {
	Classes int                  `json:"classes"`
	Options solvers.StatsOptions `json:"options"`
}

// shardSumFn emits a shard's part of the job's sum: solvers.Stats (gob)
// or a vector (float64s).
type shardSumFn struct {
	Job       string
	job       shardJob
	transform *preprocessing.Transform
}

func (f *shardSumFn) Setup() error {
	if err := json.Unmarshal([]byte(f.Job), &f.job); err != nil {
		return err
	}
	if f.job.Transform != nil {
		f.transform = new(preprocessing.Transform)
		if err := gob.NewDecoder(bytes.NewReader(f.job.Transform)).Decode(f.transform); err != nil {
			return fmt.Errorf("the job's transform: %w", err)
		}
	}
	return nil
}

func (f *shardSumFn) ProcessElement(ctx context.Context, path string, emit func([]byte)) error {
	release := acquire(f.job.Workers)
	defer release()
	file, err := features.Open(path, features.ReadOptions{Import: f.job.Import})
	if err != nil {
		return err
	}
	defer file.Close()
	rows, err := train.ExampleRows(file, path)
	if err != nil {
		return err
	}
	if f.transform != nil {
		if err := f.transform.Check(rows.Dim()); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rows = solvers.TransformRows(rows, f.transform)
	}
	var b []byte
	switch {
	case f.job.Stats != nil:
		st, err := solvers.Accumulate(ctx, rows, f.job.Stats.Classes, f.job.Stats.Options)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if b, err = encodeStats(st); err != nil {
			return err
		}
	case f.job.Pass != nil && f.job.Pass.Kind == solvers.PassPublicUtilities:
		p := f.job.Pass
		pub, closePub, err := train.OpenPublicSource(p.Public, f.job.Import, p.Normalize)
		if err != nil {
			return err
		}
		defer closePub()
		v, err := prototypes.ShardUtilities(ctx, rows, p.M, p.Normalize, pub, p.DMin, p.DMax)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		b = encodeVector(v)
	case f.job.Pass != nil:
		p := *f.job.Pass
		p.First = f.job.First[path]
		v, err := solvers.RunPass(ctx, rows, p)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		b = encodeVector(v)
	default:
		return fmt.Errorf("a shard job with nothing to compute")
	}
	emit(b)
	return nil
}

// maxResultBytes bounds a pass's result as the driver reads it back (a
// fit's statistics hold a D×D matrix per class: 10 classes of D = 4096
// are 1.3 GB).
const maxResultBytes = 8 << 30

// writeResultFn writes the combined sum where the driver reads it: a
// local file, or an object (objstore), whole or not at all.
type writeResultFn struct{ Path string }

func (f *writeResultFn) ProcessElement(ctx context.Context, b []byte) error {
	return objstore.WriteFile(ctx, f.Path, b)
}

func init() {
	register.DoFn3x1[context.Context, string, func([]byte), error](&shardSumFn{})
	register.DoFn2x1[context.Context, []byte, error](&writeResultFn{})
	register.Emitter1[[]byte]()
	beam.RegisterType(reflect.TypeOf((*shardSumFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*writeResultFn)(nil)).Elem())
}
