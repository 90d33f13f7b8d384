package encode

import (
	"math"
	"testing"
)

func TestFloat16(t *testing.T) {
	cases := []struct {
		f float32
		h uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {0.5, 0x3800},
		{float32(math.Inf(1)), 0x7c00}, {1e6, 0x7c00}, {6.103515625e-05, 0x0400}, // smallest normal
		{5.960464477539063e-08, 0x0001}, // smallest subnormal
		{0.333251953125, 0x3555},
		{1.0009765625 / 2 * 2, 0x3c01},
	}
	for _, c := range cases {
		if got := f32ToF16(c.f); got != c.h {
			t.Errorf("f32ToF16(%v) = %#04x, want %#04x", c.f, got, c.h)
		}
		if got := f16ToF32(c.h); c.h != 0x7c00 && got != c.f && !(c.f == 1e6) {
			t.Errorf("f16ToF32(%#04x) = %v, want %v", c.h, got, c.f)
		}
	}
	// Every half round-trips exactly.
	for h := 0; h < 1<<16; h++ {
		f := f16ToF32(uint16(h))
		if math.IsNaN(float64(f)) {
			continue
		}
		if back := f32ToF16(f); back != uint16(h) {
			t.Fatalf("%#04x → %v → %#04x", h, f, back)
		}
	}
	// Ties round to even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
	if got := f32ToF16(1 + 1.0/2048); got != 0x3c00 {
		t.Errorf("tie rounds to %#04x, want 0x3c00", got)
	}
}
