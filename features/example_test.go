package features_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dpfeat/dpfeat/features"
)

// ExampleCreate writes a feature file batch by batch (committed
// atomically by Close) and opens it again.
func ExampleCreate() {
	dir, _ := os.MkdirTemp("", "dpfeat-example-*")
	defer os.RemoveAll(dir) // made by MkdirTemp above
	path := filepath.Join(dir, "f.arrow")
	w, err := features.Create(path, 3, features.Metadata{Classes: []string{"no", "yes"}, EncoderName: "demo"}, features.WriterOptions{WithID: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	b := features.Batch{Dim: 3, Features: []float32{1, 0, 0, 0, 1, 0}, Labels: []int32{0, 1}, IDs: []string{"a.png", "b.png"}}
	if err := w.Write(b); err != nil {
		fmt.Println(err)
		return
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	f, err := features.Open(path, features.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	m, _ := f.Load()
	fmt.Println(f.Rows(), f.Dim(), f.Classes(), m.IDs, m.Labels)
	// Output: 2 3 [no yes] [a.png b.png] [0 1]
}
