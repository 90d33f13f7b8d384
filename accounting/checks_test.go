package accounting

import (
	"strings"
	"testing"
)

func TestDeltaWarning(t *testing.T) {
	cases := []struct {
		delta float64
		n     int
		warn  bool
	}{
		{1e-5, 1000, false},
		{1e-3, 1000, true}, // δ = 1/n
		{0.01, 1000, true},
		{1e-5, 0, false}, // n unknown
	}
	for _, c := range cases {
		w := DeltaWarning(c.delta, c.n)
		if (w != "") != c.warn || (c.warn && !strings.Contains(w, "not below 1/n")) {
			t.Errorf("δ = %g, n = %d: %q", c.delta, c.n, w)
		}
	}
}
