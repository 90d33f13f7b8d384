// Package solvers holds the feature-space DP solvers of Mehta, Krichene,
// Thakurta, Kurakin & Cutkosky, "Differentially Private Image Classification
// from Features" (DP-LS, DP-Newton, DP-FC, DP-SGD; Algorithms 1–4), the
// last-layer DP-SGD/Adam/LAMB of Mehta et al., "Large Scale Transfer Learning
// for DP Image Classification", private linear probing (DP-RandP, Tang et
// al., App. G), and their non-private references. Every solver calibrates
// its noise and reports its guarantee with package accounting.
package solvers
