package solvers

import (
	"fmt"
	"math"
)

// farFromCentred is the share of the features' mean squared norm held by
// their mean, ‖E x‖²/E‖x‖², above which a fit notes that the features
// are far from centred. Measured on Fashion-MNIST's private half
// (unit-normalised rows): the encoders trained on its public half give
// 0.55 (ResNet) and 0.07 (ViT), where dpls and dpfc work (0.90 and 0.82
// at ε = 1, n = 2,100) and no note is made; a randomly initialised
// torchvision ResNet-18 gives 0.991, where at ε = 1, n = 4,000 dpls gets
// 0.114 and dpfc 0.136 (chance is 0.10) and both note it, while auto,
// which centres privately, gets 0.676 and non-private ls 0.786.
const farFromCentred = 0.9

// Centring is what a method's released statistics say about how far the
// features are from centred: a post-processing of noisy sums it already
// released, at no privacy cost.
type Centring struct {
	// Share is ‖mean‖²/E‖x‖², corrected for the noise's expected
	// contribution to ‖Σx‖²: 0 for centred features, 1 when every row
	// is the same vector.
	Share float64
	// StdErr is Share's standard error from the noise: the spread of
	// the noise's squared norm, √(2D)·σ², and of its cross term with the
	// sum, 2‖Σx‖σ, over n·Σ‖x‖².
	StdErr float64
}

// centring estimates Centring from the noisy sum of the (clipped) rows,
// the per-coordinate variance of that sum's noise, the noisy sum of their
// squared norms (a Gram matrix's trace) and the (noisy) number of rows.
func centring(sum []float64, noiseVar, sumSquares, n float64) Centring {
	var s2 float64
	for _, v := range sum {
		s2 += v * v
	}
	noise := float64(len(sum)) * noiseVar
	denom := n * sumSquares
	if denom <= 0 {
		return Centring{}
	}
	signal := max(s2-noise, 0)
	se := (math.Sqrt(2*float64(len(sum)))*noiseVar + 2*math.Sqrt(signal*noiseVar)) / denom
	return Centring{Share: min(signal/denom, 1), StdErr: se}
}

// noteCentring notes, for a method whose released statistics show the
// features far from centred, that its noise then swamps the differences
// between the rows, and what to do.
func noteCentring(o *Options, c Centring) {
	if c.Share-c.StdErr < farFromCentred {
		return // not far from centred, or too noisy to say
	}
	o.note("%s: the features are far from centred: their mean holds %s of their squared norm (from the noisy statistics just released; no extra privacy cost), so the differences between images are a small part of what the noise is scaled to and %s may do no better than chance. --method auto centres them privately (or --transform whiten)",
		o.method, percent(c.Share), o.method)
}

func percent(x float64) string {
	if x >= 0.995 {
		return "over 99%"
	}
	return fmt.Sprintf("about %.0f%%", 100*x)
}
