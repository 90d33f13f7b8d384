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
//
// # The life of one release
//
// A Release owns the privacy of one release — a fit, a fine-tuning run —
// in the manner of Google's dpagg.Count: one object holds the target, the
// charge, the noise and the statement, and no other package assembles
// them.
//
//  1. NewRelease checks the target against what the method promises
//     (CheckTarget, the one rule): (ε, δ) with ε > 0 finite and
//     δ ∈ (0, 1) for an approximate method, ε alone for a pure one
//     (the exponential mechanism), ε = ∞ for a non-private reference;
//     a fixed noise multiplier σ replaces ε as the target.
//  2. Releases made before the method's own — a noisy count n̂ = n +
//     N(0, σₙ²) when n is private (PrivateCount), a transform's noisy
//     mean and second moments — take a share s of the target measured in
//     GDP's μ²: with z* the multiplier one Gaussian release of
//     sensitivity 1 needs for the whole target (WholeTarget, from the
//     exact μ-GDP curve δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), Dong,
//     Roth & Su 2022, Cor. 2.13), a prior of share s has noise
//     multiplier z*/√s, so that it takes μ² = s/z*² of μ*² = 1/z*².
//  3. The first prior charges the whole release before its noise is
//     drawn (Prior): as a plan, the priors and one Gaussian release
//     calibrated so that the plan meets the target exactly (the method's
//     share). A budget ledger that cannot take the plan refuses it, and
//     nothing is charged or drawn. Full-batch Gaussian releases compose
//     by adding μ² (GDP) and α·μ²/2 (RDP), so the plan is the fit's exact
//     cost for them; for Poisson-sampled ones it is settled below.
//  4. The method calibrates (Calibrate): the smallest multiplier z at which
//     its mechanisms and the priors together meet the target, found by
//     bisection (the package function Calibrate, rounded toward more
//     noise). The whole guarantee is charged — or, when a plan was
//     charged, settles it in the same ledger entry — before any of the
//     method's noise. A method that accounts for itself (the exponential
//     mechanism, DPPL-Public) charges its guarantee with Charge.
//  5. Noise is drawn through the release (Gaussian, Symmetric, the count):
//     on a lattice, exactly sampled, the sensitivity grown by the
//     float64 summation's error bound for the rows summed (SumSlack).
//  6. What the guarantee treats as public is recorded as typed
//     assumptions (Assume: n, the schema, a class list read from labels,
//     class counts, public features, a public transform, initial
//     parameters), each kind once with all its uses; Finish writes them
//     and, for seeded noise, that the release is for reproduction only.
//     Assumption.Text is the one place each is worded.
//
// A release is one ledger entry: refused whole, or recorded once with its
// parts listed as its mechanisms.
package accounting
