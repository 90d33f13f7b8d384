package randproc_test

import (
	"fmt"

	"github.com/dpfeat/dpfeat/randproc"
)

// Image i of a run depends on the seed, the process and i alone.
func Example() {
	o := randproc.Options{Processes: []string{"deadleaves", "spectrum"}, Width: 28, Height: 28, Channels: 1, Count: 100, Seed: 1}
	a, b := o.Image(3), o.Image(3)
	fmt.Println(a.Width, a.Height, a.Channels, string(a.Data) == string(b.Data))
	fmt.Println(o.Path("synth", 3))
	// Output:
	// 28 28 1 true
	// synth/spectrum/00000003.png
}

// The dead leaves' radii follow the scale-invariant law p(r) ∝ r⁻³: the
// median of r on [a, b] solves F(r) = 1/2.
func ExampleRadius() {
	fmt.Printf("%.4f\n", randproc.Radius(0.5, 0.01, 1))
	// Output:
	// 0.0141
}
