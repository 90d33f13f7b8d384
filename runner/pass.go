package runner

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/solvers"
)

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
		cfg, err := json.Marshal(shardJob{Import: imp, Workers: o.Workers, Pass: &p})
		if err != nil {
			return nil, err
		}
		result := filepath.Join(tmp, fmt.Sprintf("dpfeat-pass-%d-%d", os.Getpid(), n))
		defer os.Remove(result)
		b, err := combineShards(ctx, o, shards, &shardSumFn{Job: string(cfg)}, addVectors, result)
		if err != nil {
			return nil, err
		}
		return decodeVector(b)
	}, nil
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
	register.Function2x2(addVectors)
}
