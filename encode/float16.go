package encode

import "math"

// float32 ↔ IEEE 754 half precision, rounding to nearest even, for models
// whose input or output is float16.

// toHalf converts x into h (len(h) ≥ len(x)).
func toHalf(h []uint16, x []float32) {
	h = h[:len(x)]
	for i, v := range x {
		h[i] = f32ToF16(v)
	}
}

func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b >> 23) & 0xff)
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp > 127+15: // overflow
		return sign | 0x7c00
	case exp >= 127-14: // normal half
		e := uint32(exp - 127 + 15)
		m := mant >> 13
		rest := mant & 0x1fff
		h := uint32(sign) | e<<10 | m
		if rest > 0x1000 || (rest == 0x1000 && m&1 == 1) {
			h++ // may carry into the exponent, which is right
		}
		return uint16(h)
	case exp >= 127-25: // subnormal half
		mant |= 0x800000
		shift := uint32(126 - 14 - exp + 13 + 1)
		m := mant >> shift
		rest := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && m&1 == 1) {
			m++
		}
		return sign | uint16(m)
	}
	return sign
}

func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: normalise.
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
