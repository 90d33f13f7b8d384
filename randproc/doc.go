// Package randproc generates images from random processes, with no natural
// image and no private data: the data of DP-RandP's Phase I (Tang et al.,
// "Differentially Private Image Classification by Learning Priors from
// Random Processes", NeurIPS 2023, Sec. 3 and App. A.1), which pretrains
// a feature extractor on such images at no privacy cost before the
// private phases spend the budget.
//
// Two of the families Baradad et al. (NeurIPS 2021, "Learning to See by
// Looking at Noise") compare, and DP-RandP's Table 10 evaluates:
//
//   - DeadLeaves: the scale-invariant dead leaves model (Lee, Mumford and
//     Huang, IJCV 2001): discs of random colour fall on the image one
//     after another, each hidden by those that fell before it (rendered
//     front to back: a pixel keeps the first disc that covers it), until
//     every pixel is covered. Radii follow the scale-invariant law
//     p(r) ∝ r⁻³ on [RMin, RMax] (Lee et al.'s Sec. 3: the density of
//     disc sizes that makes the image statistics scale invariant),
//     drawn by inverting its distribution function (Radius).
//   - Spectrum: a Gaussian random field whose power spectrum falls as
//     1/|f|^β, β drawn per image from [BetaMin, BetaMax] (natural images
//     have β ≈ 2), made by filtering white noise in the Fourier domain;
//     with several channels, independent fields mixed by a random colour
//     matrix (Baradad et al.'s "statistical" family with random colour).
//
// Every image is a function of the seed, the process and its index alone
// (Stream), so a run, its resume and any one image are reproducible.
package randproc
