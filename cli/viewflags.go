package cli

import (
	"fmt"
	"strings"

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
		&ucli.StringFlag{Name: "augment", Value: "crop=4,flip", Usage: "with --views: the augmentation, " + augment.Syntax},
		&ucli.IntFlag{Name: "mix-self", Usage: "with --views ≥ 2: M mixups of two of the image's own views (DP-Mix_Self), λ ~ Beta(α, α)"},
		&ucli.Float64Flag{Name: "mix-alpha", Value: 1, Usage: "α of the mixups' Beta(α, α)"},
		&ucli.Uint64Flag{Name: "augment-seed", Usage: "keys the views' randomness (not a privacy mechanism; a run and its resume make the same views)"},
		&ucli.StringFlag{Name: "mix-with", Usage: "with --views: public labelled images (any source extract reads; assumed public) to mix the examples' views with (DP-Mix_Diff; their classes must be among the training classes)"},
		&ucli.StringFlag{Name: "mix-with-split", Usage: "split of --mix-with"},
		&ucli.Int64Flag{Name: "mix-with-limit", Usage: "use at most the first N images of --mix-with (they are held in memory)"},
		&ucli.IntFlag{Name: "mix-diff", Usage: "with --mix-with: M mixups per example of one of its views with a public image, soft label λ·y + (1 − λ)·y′, λ ~ Beta(α, α)"},
	}
}

// viewsFrom reads viewFlags: nil when --views is not given (then the others
// must not be).
func viewsFrom(c *ucli.Context) (*features.Views, augment.Spec, error) {
	k := c.Int("views")
	if k < 0 || (k == 0 && (c.IsSet("augment") || c.IsSet("mix-self") || c.IsSet("augment-seed") || c.IsSet("mix-alpha") || c.IsSet("mix-with") || c.IsSet("mix-diff"))) {
		return nil, augment.Spec{}, userErrorf("--augment, --mix-self, --mix-with, --mix-diff, --mix-alpha and --augment-seed make views: give --views K (K ≥ 1)")
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

// mixWith loads --mix-with's public images for --mix-diff (DP-Mix_Diff)
// and records the mixing in views (λ's Beta(α, α) is --mix-alpha's): the
// images, and their labels mapped to the training classes by name; none
// without --mix-with.
func mixWith(c *ucli.Context, views *features.Views, classes []string) ([]features.Pixels, []int32, error) {
	m, src := c.Int("mix-diff"), c.String("mix-with")
	switch {
	case m == 0 && src == "" && !c.IsSet("mix-with-split") && !c.IsSet("mix-with-limit"):
		return nil, nil, nil
	case m < 1 || src == "":
		return nil, nil, userErrorf("--mix-with SRC and --mix-diff M (M ≥ 1) go together (as do --mix-with-split and --mix-with-limit)")
	case !(c.Float64("mix-alpha") > 0):
		return nil, nil, userErrorf("--mix-alpha must be > 0, got %v", c.Float64("mix-alpha"))
	case c.Int64("mix-with-limit") < 0:
		return nil, nil, userErrorf("--mix-with-limit must be ≥ 0, got %d", c.Int64("mix-with-limit"))
	}
	// The public partners must not be the private images (#36 item 3):
	// not the source itself, nor a folder inside it or around it.
	if data := c.String("data"); data != "" && (sameFile(src, data) || within(src, data) || within(data, src)) {
		return nil, nil, userErrorf("--mix-with %s is the private data --data %s (or holds it, or lies inside it): DP-Mix_Diff mixes with public images, never private ones", src, data)
	}
	fmt.Fprintf(c.App.ErrWriter, "dpfeat: loading %s (public, to mix with)\n", src)
	split, limit := c.String("mix-with-split"), c.Int64("mix-with-limit")
	pub, labels, pubClasses, err := features.ReadImages(src, features.DatasetOptions{Split: split}, limit, true)
	if err != nil {
		return nil, nil, userErrorf("--mix-with: %v", err)
	}
	index := map[string]int32{}
	for i, name := range classes {
		index[name] = int32(i)
	}
	for i, l := range labels {
		j, ok := index[pubClasses[l]]
		if !ok {
			return nil, nil, userErrorf("--mix-with %s: class %q is not a training class (%s)", src, pubClasses[l], strings.Join(classes, ", "))
		}
		labels[i] = j
	}
	// What was mixed with, as the guarantee and a resume's identity see it.
	what := src
	if split != "" {
		what += " (split " + split + ")"
	}
	if limit > 0 {
		what += fmt.Sprintf(" first %d images", limit)
	}
	views.MixDiff, views.MixWith, views.MixAlpha = m, what, c.Float64("mix-alpha")
	return pub, labels, nil
}
