package finetune

import (
	"fmt"
	"math"
)

// Accuracy classifies each example as the label with the smallest loss —
// the graph gives per-example losses, not scores, so it is run once per
// class (−log softmax is smallest where the score is largest) — and
// returns the share of examples classified correctly.
func Accuracy(g *Graph, params [][]float32, d Data, classes, chunk int) (float64, error) {
	if classes < 2 {
		return 0, fmt.Errorf("accuracy needs at least 2 classes")
	}
	if chunk <= 0 {
		chunk = 256
	}
	size := g.ImageSize()
	grads := make([][]float32, len(g.Params))
	for i, p := range g.Params {
		grads[i] = make([]float32, chunk*p.Size)
	}
	loss := make([]float32, chunk)
	labels := make([]int64, chunk)
	correct := 0
	best := make([]float32, chunk)
	arg := make([]int64, chunk)
	for start := 0; start < d.N; start += chunk {
		n := min(chunk, d.N-start)
		for i := range best[:n] {
			best[i] = float32(math.Inf(1))
		}
		for c := 0; c < classes; c++ {
			for i := range labels[:n] {
				labels[i] = int64(c)
			}
			if err := g.Run(params, d.Images[start*size:(start+n)*size], labels, n, grads, loss); err != nil {
				return 0, err
			}
			for i, l := range loss[:n] {
				if l < best[i] {
					best[i], arg[i] = l, int64(c)
				}
			}
		}
		for i := 0; i < n; i++ {
			if arg[i] == d.Labels[start+i] {
				correct++
			}
		}
	}
	return float64(correct) / float64(d.N), nil
}
