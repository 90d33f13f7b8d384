package augment_test

import (
	"fmt"

	"github.com/dpfeat/dpfeat/augment"
	"github.com/dpfeat/dpfeat/features"
)

// Four Self-Aug views of an image: random crops of the image padded by
// reflection, mirrored half the time; the same seed and example id give
// the same views in any run.
func ExampleSpec_Views() {
	spec, err := augment.Parse("crop=2,flip")
	if err != nil {
		panic(err)
	}
	img := features.Pixels{Width: 4, Height: 1, Channels: 1, Data: []uint8{10, 20, 30, 40}}
	for _, v := range spec.Views(img, 4, 1, "cat/001.png") {
		fmt.Println(v.Data)
	}
	fmt.Println(spec)
	// Output:
	// [30 20 10 20]
	// [30 40 30 20]
	// [20 10 20 30]
	// [30 20 10 20]
	// crop=2,flip
}
