package train_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/synth"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/train"
)

// ExampleFit fits DP-LS at (ε = 1, δ = 1e-5) on a small feature file and
// saves the classifier. (A seeded noise source, as here, is for
// reproduction only: real runs leave Noise unset for secure noise.)
func ExampleFit() {
	dir, _ := os.MkdirTemp("", "dpfeat-example-*")
	defer os.RemoveAll(dir) // made by MkdirTemp above
	path := filepath.Join(dir, "train.arrow")
	meta := features.Metadata{Classes: []string{"cat", "dog", "owl"}, EncoderName: "demo"}
	if err := synth.WriteClusters(path, 300, 8, meta, 0.5, 1, nil); err != nil {
		fmt.Println(err)
		return
	}
	out, err := train.Fit(context.Background(), train.Request{Method: "dpls", Train: path,
		Options: solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(1)}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	clf := out.Classifier
	fmt.Println(clf.Kind, clf.Classes, clf.Dim, out.Rows)
	fmt.Println(clf.Guarantee.Accountant, float64(clf.Guarantee.Epsilon) <= 1)
	if err := clf.Save(filepath.Join(dir, "clf.safetensors")); err != nil {
		fmt.Println(err)
	}
	// Output:
	// linear [cat dog owl] 8 300
	// gdp true
}
