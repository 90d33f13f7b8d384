// Package accounting turns noise into a privacy guarantee and back. It is the
// single accountant of dpfeat: the solvers use it to calibrate their noise,
// and the same functions compute the guarantee that is printed and stored in
// every classifier file, so what is calibrated is what is reported.
//
// It is pure math with no I/O and depends on nothing else in the project.
//
// # Accountants
//
//   - GDP (AccountantGDP): every full-batch method of the papers dpfeat
//     implements is a composition of Gaussian releases — DP-LS three
//     (Mehta et al. 2023, Alg. 2), DP-FC T+1 (Alg. 3), DP-Newton 2m per step
//     (Alg. 1), DPPL-Mean one per class in parallel (Wahdany et al. 2025).
//     A Gaussian release with sensitivity Δ and noise s is μ = Δ/s GDP,
//     compositions add μ², and the μ-GDP curve δ(ε) = Φ(−ε/μ + μ/2) −
//     e^ε Φ(−ε/μ − μ/2) is exact (Dong, Roth & Su 2022, Cor. 2.13 and 3.3;
//     Balle & Wang 2018, Thm. 8). This is tighter than the zCDP conversion the
//     papers used.
//   - zCDP (AccountantZCDP): ρ adds; Gaussian μ²/2, pure ε²/2, exponential
//     mechanism ε²/8 (bounded range); converted by Canonne, Kamath & Steinke
//     2020 (default) or the simple ρ + 2√(ρ log 1/δ) of Bun & Steinke 2016.
//   - RDP (AccountantRDP): the Poisson-subsampled Gaussian of Mironov, Talwar
//     & Zhang 2019, exact at integer orders (binomial sum) and fractional
//     orders (the signed two-sided series), summed over heterogeneous
//     mechanisms and converted with Balle et al. 2020, Thm. 21, over
//     DefaultOrders.
//   - pure (AccountantPure): basic composition of ε-DP mechanisms.
//   - auto: every accountant that applies, keeping the smallest ε.
//
// # Rounding
//
// Every conversion from a curve δ(ε) to ε returns the upper end of a
// bisection run to float64 resolution, and Calibrate returns the upper end of
// its bracket on the noise multiplier, so no rounding or search tolerance can
// give a user a weaker guarantee than the one asked for. FormatUp rounds
// printed values up.
//
// # Noise
//
// Randomness enters through a Noise value: SecureNoise (ChaCha8 keyed from
// the operating system's CSPRNG) in production, SeededNoise only when the
// user passes a seed, in which case the Guarantee is marked Seeded and says
// that the run is for reproduction only. Every random decision is made
// from its uniform 64-bit words with exact samplers (exact.go): the
// discrete Gaussian of Canonne, Kamath & Steinke (NeurIPS 2020, Algorithm
// 3) over a discrete Laplace proposal drawn by inversion (a geometric
// magnitude ⌊−t·ln U⌋ decided from one word, or, rarely, from exp(−k/t)'s
// exact digits), Bernoulli(exp(−γ)) decided the same way, Bernoulli(q) for
// Poisson sampling, uniform integers.
//
// AddGaussian (and AddGaussianPart) and AddSymmetricGaussian release a
// statistic in place on a power-of-two lattice gℤ, g ≤ 2⁻³¹σ: the value is
// rounded to the lattice and discrete Gaussian noise on it is added, with
// σ rounded up to a multiple of g and the rounding's √len·g added to the
// sensitivity — the design of Google's differential-privacy library and
// OpenDP against the floating-point attacks of Mironov (2012) and Jin et al.
// (2022): each output is a function of an integer whose law has full
// support. The discrete Gaussian has the continuous one's Rényi/zCDP bounds
// exactly (CKS Prop. 5, Thm. 14); its trade-off curve matches the
// continuous Gaussian's to relative order s⁻² ≤ 2⁻⁶², far inside the
// factor 1 + 2⁻⁵⁰ by which σ is at least rounded up, so the GDP statements
// hold as computed.
// SampleExponential samples the exponential mechanism exactly by rejection
// (no candidate's probability is 0, unlike a bounded Gumbel draw).
package accounting
