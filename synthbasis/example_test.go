package synthbasis_test

import (
	"fmt"

	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/synthbasis"
)

// What a feature file records as the source of its encoder's synthetic
// basis, for an encoder of 224×224 RGB images.
func ExampleSettings_Source() {
	s := synthbasis.Settings{Count: synthbasis.DefaultCount}
	fmt.Println(s.Source(models.Input{Channels: 3, Height: 224, Width: 224}))
	// Output: synthetic: 2000 random-process images (deadleaves, spectrum, 224×224, 3 channel(s), seed 0): no data
}
