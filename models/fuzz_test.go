package models

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
)

// FuzzClassifier feeds arbitrary bytes to the classifier reader (#16):
// it may refuse them but must never panic, and what it accepts must be a
// classifier that scores a row without panicking.
func FuzzClassifier(f *testing.F) {
	c := &Classifier{Kind: "linear", Classes: []string{"a", "b"}, Dim: 3, Weight: []float32{1, 0, 0, 0, 1, 0}, Bias: []float32{0, 0},
		Prep: Preprocessing{Normalize: true}, Guarantee: accounting.NonPrivate("fuzz seed")}
	path := filepath.Join(f.TempDir(), "c.safetensors")
	if err := c.Save(path); err != nil {
		f.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseClassifier(data)
		if err != nil {
			return
		}
		x := make([]float64, c.Dim)
		if c.Dim > 1<<16 {
			return // valid but too large to score here
		}
		out := make([]float64, len(c.Classes))
		c.Scores(x, out)
	})
}
