package memsize

import "testing"

func TestString(t *testing.T) {
	for _, c := range []struct {
		b    float64
		want string
	}{{1, "1 KiB"}, {1 << 20, "1.0 MiB"}, {1.5 * (1 << 30), "1.5 GiB"}, {0, "0 KiB"}} {
		if got := String(c.b); got != c.want {
			t.Errorf("String(%v) = %q, want %q", c.b, got, c.want)
		}
	}
	if Or(0) != Default || Or(7) != 7 {
		t.Error("Or")
	}
}
