package cli

import (
	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/augment"
	"github.com/dpfeat/dpfeat/features"
)

// viewFlags are the flags that make several views of each image
// (augmentation multiplicity, DP-Mix_Self): extract writes them as rows of
// a multi-view file, finetune makes them afresh at every step. what says
// where the views go.
func viewFlags(what string) []ucli.Flag {
	return []ucli.Flag{
		&ucli.IntFlag{Name: "views", Usage: "augmentation multiplicity: K augmented views per image, " + what + " (the example stays the privacy unit)"},
		&ucli.StringFlag{Name: "augment", Value: "crop=4,flip", Usage: "with --views: the augmentation, crop=P (random crop of the image padded by P pixels), flip, or none"},
		&ucli.IntFlag{Name: "mix-self", Usage: "with --views ≥ 2: M mixups of two of the image's own views (DP-Mix_Self), λ ~ Beta(α, α)"},
		&ucli.Float64Flag{Name: "mix-alpha", Value: 1, Usage: "α of the mixups' Beta(α, α)"},
		&ucli.Uint64Flag{Name: "augment-seed", Usage: "keys the views' randomness (not a privacy mechanism; a run and its resume make the same views)"},
	}
}

// viewsFrom reads viewFlags: nil when --views is not given (then the others
// must not be).
func viewsFrom(c *ucli.Context) (*features.Views, augment.Spec, error) {
	k := c.Int("views")
	if k < 0 || (k == 0 && (c.IsSet("augment") || c.IsSet("mix-self") || c.IsSet("augment-seed") || c.IsSet("mix-alpha"))) {
		return nil, augment.Spec{}, userErrorf("--augment, --mix-self, --mix-alpha and --augment-seed make views: give --views K (K ≥ 1)")
	}
	if k == 0 {
		return nil, augment.Spec{}, nil
	}
	spec, err := augment.Parse(c.String("augment"))
	if err != nil {
		return nil, spec, userErrorf("--augment: %v", err)
	}
	v := &features.Views{Views: k, Augment: spec.String(), MixSelf: c.Int("mix-self"), Seed: c.Uint64("augment-seed")}
	switch {
	case v.MixSelf < 0:
		return nil, spec, userErrorf("--mix-self must be ≥ 0, got %d", v.MixSelf)
	case v.MixSelf > 0:
		v.MixAlpha = c.Float64("mix-alpha")
		if k < 2 || !(v.MixAlpha > 0) {
			return nil, spec, userErrorf("--mix-self %d: needs --views ≥ 2 and --mix-alpha > 0", v.MixSelf)
		}
	}
	return v, spec, nil
}
