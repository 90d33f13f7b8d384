package runner

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

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
