// Package synthbasis makes an encoder's synthetic basis: the features of
// images drawn from random processes (package randproc: dead leaves and
// power-law spectra) run through the encoder. The images hold no natural
// image and no private data — every one is a function of the settings and
// its index alone — so their features are public by construction, whatever
// the encoder and whatever data it is later run on, and using them costs
// no privacy.
//
// What it is for. fit --method auto takes an encoder's basis features
// (solvers.TransformSpec.Basis) at small n·μ: DPPL-Mean on their top
// principal directions below n·μ = 100, and the private whitening within
// their top 32 directions from 100 to 300 with at most 16·D rows
// (solvers.ChooseAuto). The basis was first the encoder's own training
// features, shipped by its author (models.Basis); few encoders ship one.
// The synthetic basis is the idea of DP-RandP (Tang et al., "Differentially
// Private Image Classification by Learning Priors from Random Processes",
// NeurIPS 2023, Sec. 3: priors learned from random-process images at no
// privacy cost) applied to the frozen encoder's feature space: the
// directions in which the encoder's features vary over random textures,
// shapes and edges are mostly those in which they vary over natural
// images, and the directions a private whitening at n ≈ 600 cannot learn
// through its noise (bench/results/shift-synthbasis.md: on the shift
// bench's 600-row cells as good as the encoder's own training features).
//
// Where it lives. extract makes it once per encoder and settings, when the
// manifest names no basis, into a cache folder (Dir: $DPFEAT_CACHE/basis,
// or the user cache's dpfeat/basis) under a name keyed by the encoder's
// hash and the settings (Path), and records its path and hash in the
// features it writes (features.Metadata.Basis), as it does a manifest's.
// The file is an ordinary feature file of the encoder (its rows labelled
// by process), written through a partial and a rename like every other;
// a cached file is reused only if it is whole and of this encoder.
package synthbasis
