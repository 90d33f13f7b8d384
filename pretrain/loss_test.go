package pretrain

import (
	"math"
	"math/rand/v2"
	"testing"
)

// direct is the loss as Wang and Isola's reference code writes it
// (align_loss + (uniform_loss(x) + uniform_loss(y))/2), on float64 rows.
func direct(e1, e2 []float64, n, d int, t, lambda float64) float64 {
	unit := func(e []float64) []float64 {
		x := make([]float64, len(e))
		for i := 0; i < n; i++ {
			var s float64
			for _, v := range e[i*d : (i+1)*d] {
				s += v * v
			}
			for k := range d {
				x[i*d+k] = e[i*d+k] / math.Sqrt(s)
			}
		}
		return x
	}
	x, y := unit(e1), unit(e2)
	var align float64
	for i := 0; i < n; i++ {
		var s float64
		for k := range d {
			s += (x[i*d+k] - y[i*d+k]) * (x[i*d+k] - y[i*d+k])
		}
		align += math.Pow(math.Sqrt(s), 2)
	}
	align /= float64(n)
	unif := func(x []float64) float64 {
		var sum float64
		var p int
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				var s float64
				for k := range d {
					s += (x[i*d+k] - x[j*d+k]) * (x[i*d+k] - x[j*d+k])
				}
				sum += math.Exp(-t * s)
				p++
			}
		}
		return math.Log(sum / float64(p))
	}
	return align + lambda*(unif(x)+unif(y))/2
}

// TestAlignUniform: the loss equals the direct formula, and its gradient
// with respect to both views' unnormalised embeddings matches central
// differences of the direct formula, at several temperatures and batch
// sizes (2 included).
func TestAlignUniform(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		n, d      int
		temp, lam float64
	}{{2, 3, 2, 1}, {5, 4, 2, 1}, {9, 6, 0.5, 2}, {7, 3, 8, 1}} {
		e1, e2 := make([]float32, c.n*c.d), make([]float32, c.n*c.d)
		for i := range e1 {
			e1[i] = float32(r.NormFloat64() * 2)
			e2[i] = e1[i] + float32(0.5*r.NormFloat64())
		}
		g1, g2 := make([]float32, len(e1)), make([]float32, len(e2))
		l := AlignUniform(e1, e2, c.n, c.d, c.temp, c.lam, g1, g2)
		f1, f2 := to64(e1), to64(e2)
		want := direct(f1, f2, c.n, c.d, c.temp, c.lam)
		if math.Abs(l.Total-want) > 1e-9*math.Max(1, math.Abs(want)) || math.Abs(l.Align+c.lam*l.Uniform-l.Total) > 1e-12 {
			t.Fatalf("%+v: loss %v (align %v, uniform %v), direct %v", c, l.Total, l.Align, l.Uniform, want)
		}
		for v, pair := range [][2][]float64{{f1, nil}, {nil, f2}} {
			e, g := f1, g1
			if pair[0] == nil {
				e, g = f2, g2
			}
			for i := range e {
				const h = 1e-6
				old := e[i]
				e[i] = old + h
				up := direct(f1, f2, c.n, c.d, c.temp, c.lam)
				e[i] = old - h
				down := direct(f1, f2, c.n, c.d, c.temp, c.lam)
				e[i] = old
				fd := (up - down) / (2 * h)
				if math.Abs(float64(g[i])-fd) > 1e-4*math.Max(1, math.Abs(fd)) {
					t.Fatalf("%+v: view %d, ∂L/∂e[%d] = %v, central difference %v", c, v+1, i, g[i], fd)
				}
			}
		}
	}
	// Identical views align perfectly; a zero embedding gets no gradient.
	e := []float32{1, 0, 0, 1, 0, 0}
	g1, g2 := make([]float32, 6), make([]float32, 6)
	if l := AlignUniform(e, e, 3, 2, 2, 1, g1, g2); l.Align != 0 || g1[4] != 0 || g1[5] != 0 || math.IsNaN(l.Total) {
		t.Errorf("loss %+v, gradient of the zero row %v", l, g1[4:])
	}
}

func to64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
