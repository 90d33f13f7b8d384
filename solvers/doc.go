// Package solvers holds the feature-space DP solvers of Mehta, Krichene,
// Thakurta, Kurakin & Cutkosky, "Differentially Private Image Classification
// from Features" (DP-LS, DP-Newton, DP-FC, DP-SGD; Algorithms 1–4), the
// last-layer DP-SGD/Adam/LAMB of Mehta et al., "Large Scale Transfer Learning
// for DP Image Classification", private linear probing (DP-RandP, Tang et
// al., App. G), and their non-private references. Every solver calibrates
// its noise and reports its guarantee with package accounting.
//
// # Methods describe themselves
//
// A Method is registered once (Register; package prototypes adds the
// DPPL methods) with its hyperparameters (Param: name, default or
// "derived from the data", documentation) and, for the logistic methods,
// its feature map (FeatureMap: u = BiasFeatures(x, C) and what is
// clipped). Everything else is derived from that description: the
// command line's hyperparameter flags and their help, the refusal of
// unknown --param names and sweep grid keys (CheckParams), the defaults a
// fit records and marks as defaulted (Params reads them from the
// description; a method reading an undeclared name panics), and the
// audit's canaries (Setting, FeatureMap.Clips, BiasFeatures, Sigmoid), so
// a changed default or feature map cannot silently weaken the audit.
//
// # Feature transforms and auto
//
// Any method may first learn a linear feature transform (TransformSpec,
// transform.go: centring, standardisation, principal directions,
// whitening), privately from a share of the budget or from public rows
// for free; Fit composes its releases with the method's in one
// calibration (Options.prior), trains the method on the transformed,
// renormalised rows and stores the transform in Result.Prep, which every
// classifier applies before scoring. Method auto (auto.go) chooses the
// method and the transform from public quantities only (ChooseAuto).
//
// # Rows
//
// The solvers see training rows through their own interfaces — Rows (a
// stream of float32 blocks, for the methods with sufficient statistics)
// and Data (prepared in memory by Prepare) — and public rows through
// PublicSource; package train adapts feature files to them.
//
// # Several rows per example
//
// Rows and Data may group rows into private examples (Rows.Groups,
// Data.Groups): the views of augmentation multiplicity (De et al. 2022)
// and DP-Mix (Bao et al. 2023, Alg. 1, whose per-example gradient is the
// mean over the example's augmentations and mixups before clipping).
// Every method then clips or bounds the mean of an example's rows, weighs
// each row 1/k in its sums, and counts examples (groups.go); a grouping of
// one row per example takes the single-row arithmetic exactly. Rows may
// also carry weights (Rows.Weights, Data.W): DP-Mix_Diff's soft label
// λ·y + (1 − λ)·y′ is two rows of the same features, labels y and y′,
// weights λ and 1 − λ, and an example's mean is then weighted. Every
// method's terms are linear in the one-hot target, so the pair adds the
// soft label's term (the exponential mechanisms of package prototypes,
// whose utilities are per class, refuse weighted rows).
package solvers
