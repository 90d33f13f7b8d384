package bigmem

import "testing"

func TestSlicesAreZeroedAndUsable(t *testing.T) {
	for _, n := range []int{0, 1, threshold/8 - 1, threshold / 8, 3<<20 + 17} {
		a := Float64s(n)
		b := Float32s(n)
		if len(a) != n || len(b) != n {
			t.Fatalf("n = %d: lengths %d, %d", n, len(a), len(b))
		}
		for i := range a {
			if a[i] != 0 || b[i] != 0 {
				t.Fatalf("n = %d: element %d not zero", n, i)
			}
			a[i], b[i] = float64(i), float32(i)
		}
		for i := range a {
			if a[i] != float64(i) || b[i] != float32(i) {
				t.Fatalf("n = %d: element %d lost", n, i)
			}
		}
	}
}
