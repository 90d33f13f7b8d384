package runner

import (
	"bytes"
	"encoding/gob"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dpfeat/dpfeat/solvers"
)

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
