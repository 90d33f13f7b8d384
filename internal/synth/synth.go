// Package synth makes synthetic labelled feature data for tests and
// examples: Gaussian clusters around class centres that are the same in
// every file (so that a training and a test file agree).
package synth

import (
	"math/rand/v2"

	"github.com/dpfeat/dpfeat/features"
)

// Clusters returns n rows of dimension d: row i belongs to class label(i)
// (i mod classes when label is nil) and is its class centre (standard
// normal coordinates, fixed) plus normal noise of the given spread, drawn
// from seed.
func Clusters(n, d, classes int, spread float64, seed uint64, label func(i int) int) features.Batch {
	r := rand.New(rand.NewPCG(seed, 3))
	cr := rand.New(rand.NewPCG(99, 3))
	centers := make([]float32, classes*d)
	for i := range centers {
		centers[i] = float32(cr.NormFloat64())
	}
	b := features.Batch{Dim: d, Features: make([]float32, n*d), Labels: make([]int32, n)}
	for i := 0; i < n; i++ {
		j := i % classes
		if label != nil {
			j = label(i)
		}
		b.Labels[i] = int32(j)
		for k := 0; k < d; k++ {
			b.Features[i*d+k] = centers[j*d+k] + float32(spread*r.NormFloat64())
		}
	}
	return b
}

// WriteClusters writes Clusters(n, d, len(meta.Classes), …) as a feature
// file with the given metadata.
func WriteClusters(path string, n, d int, meta features.Metadata, spread float64, seed uint64, label func(i int) int) error {
	return features.WriteFile(path, meta, features.WriterOptions{}, Clusters(n, d, len(meta.Classes), spread, seed, label))
}
