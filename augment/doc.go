// Package augment makes the views of one private example that
// augmentation multiplicity and DP-Mix train on, in pixel space:
//
//   - Self-Aug (De et al. 2022, "Unlocking high-accuracy differentially
//     private image classification through scale", Sec. 3.1, augmentation
//     multiplicity): K_base augmented views of an example — a random crop of
//     the image padded by reflection, and a random horizontal flip — whose
//     per-example gradients are averaged before clipping, so that the
//     example's sensitivity is unchanged;
//   - DP-Mix_Self (Bao et al. 2023, "DP-Mix: Mixup-based Data Augmentation
//     for Differentially Private Learning", Sec. 4): K_self mixups
//     λ·a + (1 − λ)·b of two of the example's own views, λ ~ Beta(α, α),
//     with the example's label (both parts are the example);
//   - DP-Mix_Diff (ibid.): K_diff mixups of a view with a public or
//     synthetic image, soft-labelled λ·own + (1 − λ)·partner's; the partner
//     costs no privacy.
//
// Everything an example's views depend on comes from a stream keyed by
// the run's seed and the example's id (Stream), never from other examples
// or the order of reading, so a resumed or re-sharded extraction makes the
// same views. The randomness of augmentation is not a privacy mechanism:
// the guarantee does not depend on it, and it is seeded for
// reproducibility (ChaCha8).
package augment
