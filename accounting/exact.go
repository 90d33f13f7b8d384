package accounting

import (
	"math"
	"math/big"
	"math/bits"
)

// Exact samplers. Every random decision of a private release is made from
// uniform 64-bit words (Noise.Uint64) and is exact, following Canonne,
// Kamath & Steinke, "The Discrete Gaussian for Differential Privacy"
// (NeurIPS 2020; CKS below), Algorithms 2–3 (discrete Laplace, discrete
// Gaussian). Their Bernoulli(exp(−γ)) steps, for rational γ, are decided
// as "U < exp(−γ)" for a uniform U: from U's first 64 bits when a proven
// float bracket of exp(−γ) already decides (all but ≈ 2⁻⁴⁸ of the time),
// and otherwise from exp(−γ)'s exact digits, bracketed by interval
// arithmetic at growing precision (math/big with directed rounding) and
// compared with further words of U. One word per decision instead of CKS
// Algorithm 1's 1 + γ on average.

// IntN returns a uniform integer in [0, k), k > 0, without bias (Lemire's
// multiply-and-reject).
func IntN(n Noise, k uint64) uint64 {
	if k == 0 {
		panic("accounting: IntN(0)")
	}
	hi, lo := bits.Mul64(n.Uint64(), k)
	if lo < k {
		thresh := -k % k
		for lo < thresh {
			hi, lo = bits.Mul64(n.Uint64(), k)
		}
	}
	return hi
}

// Float64 returns a uniform float64 in [0, 1) on the 2⁻⁵³ grid, for a
// decision outside a release's distribution (how many runs a private
// selection makes: its distribution is stated with this grid).
func Float64(n Noise) float64 { return float64(n.Uint64()>>11) * 0x1p-53 }

// Bernoulli returns true with probability exactly p (the float64's exact
// value; p ≤ 0 never, p ≥ 1 always): U < p decided block by block of p's
// finite binary expansion. Poisson sampling uses it, so the sampling rate
// is the q the accountant is told.
func Bernoulli(n Noise, p float64) bool { return bernoulli(n.Uint64, p) }

// bernoulli is Bernoulli over a source of 64-bit words.
func bernoulli(word func() uint64, p float64) bool {
	if !(p > 0) {
		return false
	}
	if p >= 1 {
		return true
	}
	for s := p; ; {
		s = math.Ldexp(s, 64) // exact: a power-of-two scaling
		c := math.Floor(s)    // < 2⁶⁴
		s -= c                // exact: a float's fractional part is a float
		w, cv := word(), uint64(c)
		if w != cv || s == 0 {
			return w < cv
		}
	}
}

// exactRat gives a value's exact rational num/den, computed only when a
// fast path cannot decide.
type exactRat func() (num, den *big.Int)

// bernoulliExpNeg returns true with probability exp(−γ), exactly, for
// γ ≥ 0 known to lie in [g(1 − η), g(1 + η)] (η ≤ 2⁻⁴⁰) and equal to the
// rational num/den that exact returns. One 64-bit word of U decides
// U < exp(−γ) unless it falls within the bracket's image (probability
// ≈ 2⁻⁴⁶); then expNegCompare continues with exp(−γ)'s exact digits.
func bernoulliExpNeg(n Noise, g, eta float64, exact exactRat) bool {
	if g <= 0 {
		return true // γ = 0
	}
	w := n.Uint64()
	// Usually in the log domain, U < exp(−γ) ⟺ −ln U > γ: a logarithm
	// costs a third of an exponential here. For every U with first word
	// w ≥ 2⁵³, −ln U lies within m of e (the margin of geometric: the
	// conversion, math.Log's error, U's unknown further digits); γ's
	// bracket is widened by 2⁻⁵⁰ for its own roundings.
	if w >= 1<<53 && g*eta <= 0.5 {
		e := -math.Log(float64(int64(w>>1)) * 0x1p-63) // as in geometric
		m := 0x1p-50 + e*0x1p-48
		if e-m > g*(1+eta)*(1+0x1p-50) {
			return true
		}
		if e+m < g*(1-eta)*(1-0x1p-50) {
			return false
		}
	}
	// exp(−γ) = p·exp(−(γ − g)) with p = exp(−g) (math.Exp errs by under
	// one ulp) and |γ − g| ≤ gη: within p·[1 − 2gη − 2⁻⁵⁰, 1 + 2gη + 2⁻⁵⁰]
	// while gη ≤ ½. Below exp(−700) p may underflow: 2⁻¹⁰⁰⁰ bounds it.
	p := math.Exp(-g)
	e := 2*g*eta + 0x1p-50
	plo, phi := p*(1-e), p*(1+e)
	if g*eta > 0.5 {
		plo, phi = 0, 1
	}
	if g*(1-eta) > 700 {
		phi = 0x1p-1000
	}
	return decideWord(n, w, wordBounds(plo, phi), exact)
}

// bounds are the first-word thresholds of a decision U < p with p ∈
// [lo, hi]: a first word w < low decides true, w ≥ high false (hasHigh).
type bounds struct {
	low, high uint64
	hasHigh   bool
}

func wordBounds(lo, hi float64) bounds {
	var b bounds
	// U < (w+1)/2⁶⁴ ≤ L/2⁶⁴ ≤ lo: true. (The cap keeps the conversion in
	// range; it only sends w above it to the slow path.) lo·2⁶⁴ is exact
	// and its truncation is its floor.
	if v := lo * 0x1p64; v >= 1 {
		b.low = uint64(math.Min(v, 0x1p64-4096))
	}
	// U ≥ w/2⁶⁴ ≥ H/2⁶⁴ ≥ hi: false; H = ⌈hi·2⁶⁴⌉.
	if v := hi * 0x1p64; v < 0x1p64-4096 {
		h := uint64(v)
		if float64(h) < v {
			h++
		}
		b.high, b.hasHigh = h, true
	}
	return b
}

// bernoulliWord decides U < exp(−num/den) from one word when the bounds
// allow, else exactly.
func bernoulliWord(n Noise, b bounds, exact exactRat) bool {
	return decideWord(n, n.Uint64(), b, exact)
}

// decideWord is bernoulliWord for U's first word w, already drawn.
func decideWord(n Noise, w uint64, b bounds, exact exactRat) bool {
	if w < b.low {
		return true
	}
	if b.hasHigh && w >= b.high {
		return false
	}
	num, den := exact()
	return expNegCompare(n, w, num, den)
}

// uniform is a uniform U ∈ [0, 1) drawn lazily: its base-2⁶⁴ digits
// (words), as many as decisions about it have needed so far. Several
// exact comparisons of the same U draw each further digit once.
type uniform struct {
	n     Noise
	words []uint64
}

// word returns U's i-th digit (0: the first), drawing it if need be.
func (u *uniform) word(i int) uint64 {
	for len(u.words) <= i {
		u.words = append(u.words, u.n.Uint64())
	}
	return u.words[i]
}

// expNegCompare decides U < exp(−num/den) for a uniform U whose first
// 64 bits are w, drawing further words as needed: it brackets exp(−x)
// with interval arithmetic (expNegInterval) at growing precision until
// U's prefix interval and the bracket are apart. exp(−x) is irrational for
// rational x > 0, so this ends with probability 1.
func expNegCompare(n Noise, w uint64, num, den *big.Int) bool {
	return (&uniform{n: n, words: []uint64{w}}).lessExpNeg(num, den)
}

// lessExpNeg decides U < exp(−num/den) exactly (expNegCompare).
func (un *uniform) lessExpNeg(num, den *big.Int) bool {
	if num.Sign() == 0 {
		return true
	}
	u := new(big.Int).SetUint64(un.word(0)) // U's prefix: k words
	k := 1
	for prec := uint(128); ; prec += 64 {
		lo, hi := expNegInterval(num, den, prec)
		for 64*k+64 <= int(prec) {
			// U ∈ [u, u+1)·2^(−64k)
			ul := new(big.Float).SetPrec(uint(64*k + 64)).SetInt(u)
			ul.SetMantExp(ul, -64*k)
			uh := new(big.Float).SetPrec(uint(64*k + 64)).SetInt(new(big.Int).Add(u, big.NewInt(1)))
			uh.SetMantExp(uh, -64*k)
			if uh.Cmp(lo) <= 0 {
				return true
			}
			if ul.Cmp(hi) >= 0 {
				return false
			}
			u.Lsh(u, 64)
			u.Or(u, new(big.Int).SetUint64(un.word(k)))
			k++
		}
	}
}

// expNegInterval returns big.Floats lo ≤ exp(−num/den) ≤ hi about 2^−prec
// apart (relative), by directed rounding: exp(−x) = e^(−q)·exp(−r), q =
// ⌊x⌋, r ∈ [0, 1), each factor bracketed by its alternating Taylor series
// (for 0 ≤ r ≤ 1 the terms rᵏ/k! decrease, so partial sums ending on a
// minus sign are lower bounds and those ending on a plus sign upper ones).
func expNegInterval(num, den *big.Int, prec uint) (lo, hi *big.Float) {
	qb, rb := new(big.Int).QuoRem(num, den, new(big.Int))
	p := prec + 64 + 2*uint(qb.BitLen())
	rlo, rhi := expNegSeries(new(big.Rat).SetFrac(rb, den), p)
	elo, ehi := expNegSeries(new(big.Rat).SetInt64(1), p)
	lo = new(big.Float).SetPrec(p).SetMode(big.ToNegativeInf).Set(rlo)
	hi = new(big.Float).SetPrec(p).SetMode(big.ToPositiveInf).Set(rhi)
	// e^(−q) by squaring, each bound rounded outwards.
	plo := new(big.Float).SetPrec(p).SetMode(big.ToNegativeInf).Set(elo)
	phi := new(big.Float).SetPrec(p).SetMode(big.ToPositiveInf).Set(ehi)
	for q := new(big.Int).Set(qb); q.Sign() > 0; q.Rsh(q, 1) {
		if q.Bit(0) == 1 {
			lo.Mul(lo, plo)
			hi.Mul(hi, phi)
		}
		plo.Mul(plo, plo)
		phi.Mul(phi, phi)
	}
	return lo, hi
}

// expNegSeries brackets exp(−r) for a rational 0 ≤ r ≤ 1 at p bits.
func expNegSeries(r *big.Rat, p uint) (lo, hi *big.Float) {
	down := func() *big.Float { return new(big.Float).SetPrec(p).SetMode(big.ToNegativeInf) }
	up := func() *big.Float { return new(big.Float).SetPrec(p).SetMode(big.ToPositiveInf) }
	rl, rh := down().SetRat(r), up().SetRat(r)
	tl, th := down().SetInt64(1), up().SetInt64(1)   // bounds on the term rᵏ/k!
	slo, shi := down().SetInt64(1), up().SetInt64(1) // bounds on the partial sum
	eps := new(big.Float).SetMantExp(big.NewFloat(1), -int(p))
	for k := int64(1); ; k++ {
		kf := new(big.Float).SetInt64(k)
		tl.Mul(tl, rl).Quo(tl, kf)
		th.Mul(th, rh).Quo(th, kf)
		if k%2 == 1 { // a minus term
			slo.Sub(slo, th)
			shi.Sub(shi, tl)
		} else {
			slo.Add(slo, tl)
			shi.Add(shi, th)
		}
		if th.Cmp(eps) < 0 {
			// After a minus term the partial sum is below exp(−r); the
			// next (plus) term, at most th, bounds it from above — and
			// symmetrically after a plus term.
			if k%2 == 1 {
				return slo, up().Add(shi, th)
			}
			return down().Sub(slo, th), shi
		}
	}
}

// expNeg1Bounds are the first-word thresholds of Bernoulli(e⁻¹).
var expNeg1Bounds = wordBounds(math.Exp(-1)*(1-0x1p-50), math.Exp(-1)*(1+0x1p-50))

// bernoulliExpNeg1 is Bernoulli(e⁻¹).
func bernoulliExpNeg1(n Noise) bool {
	return bernoulliWord(n, expNeg1Bounds, func() (*big.Int, *big.Int) { return big.NewInt(1), big.NewInt(1) })
}

// bernoulliExpNegRatio is Bernoulli(exp(−a/b)) for integers 0 ≤ a < 2⁵³,
// 0 < b < 2⁵³ (exact as float64s: one rounding in the division).
func bernoulliExpNegRatio(n Noise, a, b uint64) bool {
	return bernoulliExpNeg(n, float64(a)/float64(b), 0x1p-52, func() (*big.Int, *big.Int) {
		return new(big.Int).SetUint64(a), new(big.Int).SetUint64(b)
	})
}

// floatRat is a float64's exact value as a fraction.
func floatRat(x float64) (*big.Int, *big.Int) {
	r := new(big.Rat)
	r.SetFloat64(x)
	return new(big.Int).Set(r.Num()), new(big.Int).Set(r.Denom())
}

// BernoulliExpNeg returns true with probability exactly exp(−γ) for the
// float64 γ ≥ 0 (its exact value). Every γ gives a positive probability,
// however large.
func BernoulliExpNeg(n Noise, gamma float64) bool {
	if math.IsNaN(gamma) || gamma < 0 {
		panic("accounting: BernoulliExpNeg needs γ ≥ 0")
	}
	if math.IsInf(gamma, 1) {
		return false
	}
	return bernoulliExpNeg(n, gamma, 0, func() (*big.Int, *big.Int) { return floatRat(gamma) })
}

// geometric returns G ≥ 0 with P(G ≥ k) = exp(−k/t), exactly, for an
// integer 1 ≤ t < 2⁵²: by inversion of one uniform U, G ≥ k exactly when
// U < exp(−k/t), so G = ⌊−t·ln U⌋. (CKS Algorithm 2 builds the same law
// from a uniform U < t kept with probability exp(−U/t) and a geometric
// count of Bernoulli(e⁻¹) trials: about ten words and four exponentials
// per draw, against one word and one logarithm here.)
//
// From U's first 64 bits (128 when they are below 2⁻¹¹) the float value v
// of −t·ln U lies within margin of the exact value for every U with those
// bits: ⌊v⌋ is G unless an integer lies within the margin. The margin
// bounds, with slack, the conversion of U's digits to float64 (relative
// 2⁻⁵², giving 2⁻⁵² absolute in ln U), math.Log's error (under one ulp,
// relative 2⁻⁵²: counted as 2⁻⁴⁸), the product's rounding, and U's
// unknown further digits (relative width 2⁻⁶⁴/U of U's interval, the same
// absolute width in ln U). Otherwise — probability about 2·margin, ≈ 2⁻¹⁴
// at t ≈ 2³² — a binary search over the candidates decides each
// "U < exp(−k/t)" exactly with U's further digits (uniform.lessExpNeg).
func geometric(n Noise, t uint64) uint64 {
	ft := float64(t)
	w := n.Uint64()
	if w >= 1<<53 { // the usual case, kept free of allocations and divisions
		// U from w's top 63 bits (int64 converts faster than uint64):
		// U's interval, 2⁻⁶³ wide, is at most 2⁻⁵² of U here; with the
		// conversion's 2⁻⁵³, 2⁻⁵⁰·t covers both.
		v := -ft * math.Log(float64(int64(w>>1))*0x1p-63)
		margin := ft*0x1p-50 + v*0x1p-48
		// v ± margin ≥ 0 and < 2⁶³: conversion truncates, i.e. floors.
		if a := v - margin; a >= 0 {
			if lo := uint64(a); lo == uint64(v+margin) {
				return lo
			}
		}
	}
	return geometricSlow(&uniform{n: n, words: []uint64{w}}, t)
}

// geometricSlow is geometric for U's first word, when it did not decide.
func geometricSlow(u *uniform, t uint64) uint64 {
	ft := float64(t)
	var uf, width float64 // U ≈ uf, its interval's width relative to U
	switch w := u.word(0); {
	case w >= 1<<53:
		uf, width = float64(w)*0x1p-64, 1/float64(w)
	case w != 0 || u.word(1) >= 1<<53:
		// Scaled by 2⁶⁴: the sum is one rounding (2⁻⁵³ relative).
		v := float64(w)*0x1p64 + float64(u.word(1))
		uf, width = v*0x1p-128, 1/v
	default:
		// U < 2⁻¹¹⁷ (probability 2⁻¹¹⁷): no float estimate; the exact
		// search finds an upper bound by doubling.
		return geometricSearch(u, t, 0, math.MaxInt64)
	}
	v := -ft * math.Log(uf)
	margin := ft*(0x1p-50+width) + v*0x1p-48
	lo, hi := math.Floor(v-margin), math.Floor(v+margin)
	if lo == hi {
		return uint64(lo)
	}
	return geometricSearch(u, t, uint64(max(lo, 0)), uint64(hi))
}

// geometricSearch returns geometric's G for the uniform u, known to lie in
// [lo, hi], by binary search on the exact decisions G ≥ k ⟺ U < exp(−k/t);
// hi = MaxInt64 means no upper bound is known: it is found by doubling.
func geometricSearch(u *uniform, t, lo, hi uint64) uint64 {
	den := new(big.Int).SetUint64(t)
	atLeast := func(k uint64) bool { return u.lessExpNeg(new(big.Int).SetUint64(k), den) }
	if hi == math.MaxInt64 {
		for k := max(lo, 1); ; k *= 2 {
			if !atLeast(k) {
				hi = k - 1
				break
			}
			lo = k
		}
	}
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if atLeast(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// discreteLaplace samples P(Y = y) ∝ exp(−|y|/t) on the integers, t ≥ 1:
// a geometric magnitude with a uniform sign, −0 rejected (so that 0 is
// not counted twice).
func discreteLaplace(n Noise, t uint64, b *bitCache) int64 {
	for {
		g := geometric(n, t)
		neg := b.bit(n)
		if neg && g == 0 {
			continue
		}
		if neg {
			return -int64(g)
		}
		return int64(g)
	}
}

// bitCache hands out the bits of one word at a time (the discrete
// Laplace's signs): one word per 64 signs, each bit used once.
type bitCache struct {
	w uint64
	k uint
}

func (b *bitCache) bit(n Noise) bool {
	if b.k == 0 {
		b.w, b.k = n.Uint64(), 64
	}
	b.k--
	v := b.w&1 == 1
	b.w >>= 1
	return v
}

// DiscreteGaussian samples the discrete Gaussian N_ℤ(0, s²): P(Y = y) ∝
// exp(−y²/(2s²)) on the integers, exactly (CKS Algorithm 3 with σ = s an
// integer ≥ 1: a discrete Laplace proposal of scale t = s + 1 accepted with
// probability exp(−(|Y| − σ²/t)²/(2σ²))).
func DiscreteGaussian(n Noise, s uint64) int64 {
	return newDiscreteGaussian(n, s).draw()
}

// discreteGaussian draws N_ℤ(0, s²) repeatedly from one stream
// (DiscreteGaussian), sharing one word's bits among the signs.
type discreteGaussian struct {
	n     Noise
	s     uint64
	signs bitCache
	// 1/t and 1/(2s²), each one rounding: inside γ's error bound below.
	invT, inv2s2 float64
}

func newDiscreteGaussian(n Noise, s uint64) *discreteGaussian {
	if s == 0 || s >= 1<<52 {
		panic("accounting: DiscreteGaussian needs 1 ≤ s < 2⁵²")
	}
	fs := float64(s)
	return &discreteGaussian{n: n, s: s, invT: 1 / float64(s+1), inv2s2: 1 / (2 * fs * fs)}
}

func (d *discreteGaussian) draw() int64 {
	n, s := d.n, d.s
	t := s + 1
	for {
		y := discreteLaplace(n, t, &d.signs)
		ay := uint64(y)
		if y < 0 {
			ay = uint64(-y)
		}
		// σ²/t = s − 1 + 1/t, so |Y| − σ²/t = m − 1/t with m = |Y| − s + 1,
		// and γ = (m·t − 1)²/(2 s² t²).
		m := int64(ay) - int64(s) + 1
		exact := func() (*big.Int, *big.Int) {
			a := new(big.Int).Mul(big.NewInt(m), new(big.Int).SetUint64(t))
			a.Sub(a, big.NewInt(1))
			a.Mul(a, a)
			st := new(big.Int).Mul(new(big.Int).SetUint64(s), new(big.Int).SetUint64(t))
			st.Mul(st, st)
			return a, st.Lsh(st, 1)
		}
		// γ in float64 with relative error below 10·2⁻⁵³ (m and s exact,
		// six roundings): η = 2⁻⁴⁸ holds it. (|Y| ≥ 2⁵², probability
		// ≈ exp(−2¹²), goes to the exact path.)
		g, eta := 1e300, 1.0
		if ay < 1<<52 {
			e := float64(m) - d.invT
			g, eta = e*e*d.inv2s2, 0x1p-48
		}
		if bernoulliExpNeg(n, g, eta, exact) {
			return y
		}
	}
}
