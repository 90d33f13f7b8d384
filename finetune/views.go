package finetune

import (
	"fmt"

	"github.com/dpfeat/dpfeat/augment"
	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
)

// ViewMaker makes the rows of one example for one step of a phase: its
// augmented views and self-mixups (augmentation multiplicity, De et al.
// 2022; DP-Mix_Self, Bao et al. 2023, Alg. 1) and mixups with public
// images (DP-Mix_Diff), preprocessed as the graph's inputs, each with a
// label and a weight. The phase takes the example's gradient as the
// weighted mean of its rows' before it clips (one example's sensitivity,
// whatever the rows): a mixup with a soft label λ·y + (1 − λ)·y′ is two
// rows of the same image, labels y and y′, weights λ and 1 − λ — the
// cross-entropy is linear in its target, so their weighted gradients sum
// to the soft label's.
type ViewMaker interface {
	// Rows is the number of rows every example gets.
	Rows() int
	// Fill writes example e (label y) for the given step: Rows() images of
	// the graph's size one after another into out, their labels and their
	// weights (≥ 0, not all 0).
	Fill(e, step int, y int64, out []float32, labels []int64, weights []float64) error
}

// PixelViews makes an example's rows from its decoded image: Views.Views
// views under Spec, Views.MixSelf mixups of two of them, and
// Views.MixDiff mixups of one of them with a public image (Public,
// labelled PublicLabels in the private class list; λ ~ Beta(MixAlpha,
// MixAlpha) on the example's side), fresh at every step (the streams are
// keyed by the seed, the step and the example's id, so a run, and a
// resumed one, makes the same rows).
type PixelViews struct {
	Views  features.Views
	Spec   augment.Spec
	Pixels []features.Pixels
	IDs    []string
	Prep   *encode.Preprocessor
	// Public and PublicLabels are the images Views.MixDiff mixes with.
	Public       []features.Pixels
	PublicLabels []int32
}

// Rows is K + M_self + 2·M_diff (a mixup with a public image is two rows).
func (v *PixelViews) Rows() int { return v.Views.Views + v.Views.MixSelf + 2*v.Views.MixDiff }

// Fill makes example e's views and mixes for step.
func (v *PixelViews) Fill(e, step int, y int64, out []float32, labels []int64, weights []float64) error {
	seed := v.Views.Seed + uint64(step)*0x9e3779b97f4a7c15 // a stream per step
	views := v.Spec.Views(v.Pixels[e], v.Views.Views, seed, v.IDs[e])
	imgs := append([]features.Pixels(nil), views...)
	if v.Views.MixSelf > 0 {
		mixes, _ := augment.SelfMixes(views, v.Views.MixSelf, v.Views.MixAlpha, seed, v.IDs[e])
		imgs = append(imgs, mixes...)
	}
	for i := range imgs {
		labels[i], weights[i] = y, 1
	}
	if v.Views.MixDiff > 0 {
		if !(v.Views.MixAlpha > 0) || len(v.Public) == 0 {
			return fmt.Errorf("mixups with public images need public images and α > 0 (got %d images, α = %v)", len(v.Public), v.Views.MixAlpha)
		}
		mixes, partners, lambdas := augment.DiffMixes(views, v.Public, v.Views.MixDiff, v.Views.MixAlpha, seed, v.IDs[e])
		for i, mixed := range mixes {
			n := len(imgs)
			imgs = append(imgs, mixed, mixed)
			labels[n], weights[n] = y, lambdas[i]
			labels[n+1], weights[n+1] = int64(v.PublicLabels[partners[i]]), 1-lambdas[i]
		}
	}
	size := v.Prep.Size()
	for k, px := range imgs {
		if err := v.Prep.Apply(px, out[k*size:(k+1)*size]); err != nil {
			return fmt.Errorf("example %d (%s), view %d: %w", e, v.IDs[e], k, err)
		}
	}
	return nil
}
