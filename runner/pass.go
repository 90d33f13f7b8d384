package runner

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/train"
)

// PassJob is one pass of an iterative method (solvers.Pass) over a
// dataset's shards.
type PassJob struct {
	Shards  []string               `json:"shards"`
	Import  features.ImportOptions `json:"import"`
	Pass    solvers.Pass           `json:"pass"`
	Workers int                    `json:"workers"`
}

// Passer returns a solvers.Options.Pass hook that runs each pass of an
// iterative method (DP-FC: its covariance, then one per step) over the
// dataset at path on the runner: each shard's solvers.RunPass, the parts
// added by a combiner and read back on the driver, which adds the noise
// and takes the step.
func Passer(path string, imp features.ImportOptions, tmp string, o Options) (func(ctx context.Context, p solvers.Pass) ([]float64, error), error) {
	shards, err := shardPaths(path, imp, o)
	if err != nil {
		return nil, err
	}
	n := 0
	return func(ctx context.Context, p solvers.Pass) ([]float64, error) {
		n++
		cfg, err := json.Marshal(PassJob{Shards: shards, Import: imp, Pass: p, Workers: o.Workers})
		if err != nil {
			return nil, err
		}
		result := filepath.Join(tmp, fmt.Sprintf("dpfeat-pass-%d-%d", os.Getpid(), n))
		defer os.Remove(result)
		b, err := combineShards(ctx, o, shards, &shardPassFn{Job: string(cfg)}, addVectors, result)
		if err != nil {
			return nil, err
		}
		return decodeVector(b)
	}, nil
}

// shardPassFn emits a shard's part of a pass.
type shardPassFn struct {
	Job string
	job PassJob
}

func (f *shardPassFn) Setup() error { return json.Unmarshal([]byte(f.Job), &f.job) }

func (f *shardPassFn) ProcessElement(ctx context.Context, path string, emit func([]byte)) error {
	release := acquire(f.job.Workers)
	defer release()
	file, err := features.Open(path, features.ReadOptions{Import: f.job.Import})
	if err != nil {
		return err
	}
	defer file.Close()
	v, err := solvers.RunPass(ctx, train.FileRows(file), f.job.Pass)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	emit(encodeVector(v))
	return nil
}

// addVectors is the passes' combiner: the sum of two parts.
func addVectors(a, b []byte) ([]byte, error) {
	x, err := decodeVector(a)
	if err != nil {
		return nil, err
	}
	y, err := decodeVector(b)
	if err != nil {
		return nil, err
	}
	if len(x) != len(y) {
		return nil, fmt.Errorf("parts of %d and %d values", len(x), len(y))
	}
	for i, v := range y {
		x[i] += v
	}
	return encodeVector(x), nil
}

func encodeVector(v []float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

func decodeVector(b []byte) ([]float64, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("a vector of %d bytes", len(b))
	}
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v, nil
}

func init() {
	register.DoFn3x1[context.Context, string, func([]byte), error](&shardPassFn{})
	register.Function2x2(addVectors)
	beam.RegisterType(reflect.TypeOf((*shardPassFn)(nil)).Elem())
}
