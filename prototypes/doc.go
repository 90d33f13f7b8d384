// Package prototypes implements the DP prototypes of Wahdany, Jagielski,
// Dziedzić & Boenisch, "Differentially Private Prototypes for Imbalanced
// Transfer Learning": DPPL-Mean, DPPL-Public and DPPL-PublicK, and the
// nearest-prototype classifier they produce.
package prototypes
