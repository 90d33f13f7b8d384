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
// directions in which the encoder's features vary most over random
// textures, shapes and edges hold much of the class signal of real
// images, which a private whitening at n ≈ 600 cannot find through its
// noise (bench/results/shift-synthbasis.md). In a screen on
// the shift bench's twelve 600-row sets (5 seeds, the same seeds for
// each) the synthetic basis came close to the encoder's own training
// features: mean accuracy at ε = 0.3, 0.5, 1 and 1.5 0.472, 0.570, 0.659
// and 0.684 against 0.494, 0.577, 0.658 and 0.682, where auto without a
// basis had 0.370, 0.516, 0.644 and 0.681. The training features keep a
// lead at ε = 0.3 on ViT's features (in distribution 0.815 against 0.759).
//
// Where it lives. extract makes it once per encoder and settings, when the
// manifest names no basis, into a cache folder (Dir: $DPFEAT_CACHE/basis,
// or the user cache's dpfeat/basis) under a name keyed by the encoder's
// hash and the settings (Path), and records its path and hash in the
// features it writes (features.Metadata.Basis), as it does a manifest's.
// The file is an ordinary feature file of the encoder (its rows labelled
// by process), written through a partial and a rename like every other;
// a cached file is reused only if it is whole and of this encoder. fit
// checks a recorded synthetic basis by what it is (a synthetic basis of
// the training features' encoder: features.SyntheticBasisRows), not by the
// hash extract recorded, so that one remade elsewhere serves.
package synthbasis
