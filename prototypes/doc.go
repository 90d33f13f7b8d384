// Package prototypes implements the DP prototypes of Wahdany, Jagielski,
// Dziedzić & Boenisch, "Differentially Private Prototypes for Imbalanced
// Transfer Learning" (AAAI 2025): one (or K) private prototypes per class in
// the encoder's embedding space, and nearest-prototype classification.
//
//   - dpplmean: the Gaussian-mechanism sum of each class's features (clipped
//     to r, optionally average-pooled by k_pool), Sec. 4.1 / eq. (1); the
//     classes are disjoint, so one release of all sums has sensitivity r.
//     With cosine distance (the default) the prototype is the noisy sum's
//     direction and no class count is needed; with euclidean distance the
//     counts are released too (noisily, by default), or taken as public
//     with --public-counts, which the guarantee then says. With refine ≥ 1
//     and --public rows, the released prototypes are refined on them:
//     each public row goes to its nearest prototype and each prototype
//     becomes the mean of the rows it drew (a step of Lloyd's k-means
//     started from the release, the use of unlabeled data of Nigam et
//     al. 2000's EM). It reads only the release and public rows, so it is
//     post-processing (Dwork & Roth 2014, Prop. 2.1) and costs nothing;
//     auto takes one step where the sums' noise dominates, with ten
//     classes or more (solvers.AutoRefine). The whitening auto gives it
//     with public features keeps the span of their clusters
//     (solvers.TransformSpec.Clusters), where its noise is a fraction.
//   - dpplpublic: for each class the exponential mechanism picks one public
//     point (Alg. 1) with utility u = Σ clip(1 + cos(x, p), d_min, d_max) −
//     d_min, monotone with sensitivity d_max − d_min, so the exponent is
//     ε·u/Δu (App. D.1, Thm. 3); parallel over classes: ε-DP.
//   - dpplpublick: K public prototypes per class by the joint exponential
//     mechanism for unordered top-K (Gillenwater et al. 2022, App. C.3):
//     ε-DP with exponent ε·(u_y − u_K)/Δu — half the paper's 2Δu, since
//     u_K cancels and the set's utility u_min is monotone (see
//     sampleTopK); budget convention dppl keeps the paper's 2Δu.
//   - protomean: the non-private class means (ε = ∞).
//
// The methods register with package solvers, so `dpfeat fit` runs them and
// writes classifier files of kind "prototypes".
package prototypes
