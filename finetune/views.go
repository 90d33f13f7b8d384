package finetune

import (
	"fmt"

	"github.com/dpfeat/dpfeat/augment"
	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
)

// ViewMaker makes the rows of one example for one step of a phase: its
// augmented views and self-mixups (augmentation multiplicity, De et al.
// 2022; DP-Mix_Self, Bao et al. 2023, Alg. 1), preprocessed as the graph's
// inputs. The phase averages the example's per-row gradients before it
// clips (one example's sensitivity, whatever the rows).
type ViewMaker interface {
	// Rows is the number of rows every example gets.
	Rows() int
	// Fill writes example e's rows for the given step into out, Rows()
	// images of the graph's size one after another.
	Fill(e, step int, out []float32) error
}

// PixelViews makes an example's rows from its decoded image: Views.Views
// views under Spec and Views.MixSelf mixups of two of them, fresh at every
// step (the streams are keyed by the seed, the step and the example's id,
// so a run, and a resumed one, makes the same rows).
type PixelViews struct {
	Views  features.Views
	Spec   augment.Spec
	Pixels []features.Pixels
	IDs    []string
	Prep   *encode.Preprocessor
}

// Rows is K + M.
func (v *PixelViews) Rows() int { return v.Views.Views + v.Views.MixSelf }

// Fill makes example e's views and mixes for step.
func (v *PixelViews) Fill(e, step int, out []float32) error {
	seed := v.Views.Seed + uint64(step)*0x9e3779b97f4a7c15 // a stream per step
	views := v.Spec.Views(v.Pixels[e], v.Views.Views, seed, v.IDs[e])
	if v.Views.MixSelf > 0 {
		mixes, _ := augment.SelfMixes(views, v.Views.MixSelf, v.Views.MixAlpha, seed, v.IDs[e])
		views = append(views, mixes...)
	}
	size := v.Prep.Size()
	for k, px := range views {
		if err := v.Prep.Apply(px, out[k*size:(k+1)*size]); err != nil {
			return fmt.Errorf("example %d (%s), view %d: %w", e, v.IDs[e], k, err)
		}
	}
	return nil
}
