package solvers

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// Several rows per private example: augmentation multiplicity (De et al.
// 2022, "Self-Aug") and DP-Mix (Bao et al. 2023, Alg. 1) give each example
// K views. The privacy unit stays the example, so every method treats an
// example's rows as one contribution:
//
//   - statistics that are sums over examples (Gram matrices, class sums,
//     Hessians, unclipped gradients, transform statistics) take the mean of
//     the example's rows — each row weighs 1/k, k its example's rows — so
//     a bound on every row's term bounds the example's;
//   - clipped gradients clip the mean of the example's per-row gradients,
//     g_e = (1/k)·Σ_v r_v ⊗ u_v, whose norm is computed from the k×k
//     products (r_v·r_w)(u_v·u_w) without forming it; the sum is then still
//     one product Rᵀ·U, each residual row scaled by min(1, C/‖g_e‖)/k;
//   - class counts, n and sampling count examples.
//
// An example of one row takes exactly the single-row arithmetic, so a
// grouping of singletons fits the same model, bit for bit, as no grouping.

// Examples returns the number of examples: len(Groups), or N when every row
// is its own.
func (d *Data) Examples() int {
	if d.Groups == nil {
		return d.N
	}
	return len(d.Groups)
}

// ExamplesOf returns the number of examples a stream of rows holds.
func ExamplesOf(r Rows) int64 {
	if g := r.Groups(); g != nil {
		return int64(len(g))
	}
	return r.Len()
}

// CheckGroups verifies a grouping of rows (nil: one row per example): every
// example has at least one row, they cover exactly the rows, and an
// example's rows share its label (its views; soft-labelled mixes are not
// rows of this kind).
func CheckGroups(groups []int32, y []int32) error {
	if groups == nil {
		return nil
	}
	var at int
	for e, k := range groups {
		if k < 1 {
			return fmt.Errorf("example %d has %d rows; expected at least 1", e, k)
		}
		if at+int(k) > len(y) {
			return fmt.Errorf("the examples' rows number more than the %d rows", len(y))
		}
		for i := at + 1; i < at+int(k); i++ {
			if y[i] != y[at] {
				return fmt.Errorf("rows %d and %d of one example have labels %d and %d; an example's views share its label", at, i, y[at], y[i])
			}
		}
		at += int(k)
	}
	if at != len(y) {
		return fmt.Errorf("the examples cover %d of the %d rows", at, len(y))
	}
	return nil
}

// groupWalk hands out consecutive runs of whole examples from a grouping
// (nil: one row per example, of n rows in all).
type groupWalk struct {
	sizes []int32
	g     int // next example
	left  int // rows not handed out (ungrouped)
}

func newGroupWalk(sizes []int32, n int) *groupWalk { return &groupWalk{sizes: sizes, left: n} }

// next returns the rows of the next run — whole examples, as many as fit
// in want rows but at least one (exactly want rows without grouping,
// unless the data ends first) — and their sizes (nil without grouping).
// 0 rows: the end.
func (w *groupWalk) next(want int) (rows int, sizes []int32) {
	if w.sizes == nil {
		k := min(want, w.left)
		w.left -= k
		return k, nil
	}
	g0 := w.g
	for w.g < len(w.sizes) && (w.g == g0 || rows+int(w.sizes[w.g]) <= want) {
		rows += int(w.sizes[w.g])
		w.g++
	}
	return rows, w.sizes[g0:w.g]
}

// take returns the sizes of the examples in the next n rows, which must end
// on an example's last row (the Rows contract).
func (w *groupWalk) take(n int) ([]int32, error) {
	if w.sizes == nil {
		w.left -= n
		return nil, nil
	}
	g0, rows := w.g, 0
	for w.g < len(w.sizes) && rows < n {
		rows += int(w.sizes[w.g])
		w.g++
	}
	if rows != n {
		return nil, fmt.Errorf("a block of %d rows splits an example (Rows.Each must hand out whole examples)", n)
	}
	return w.sizes[g0:w.g], nil
}

// splitParts returns parts+1 row bounds cutting n rows into parts at
// example boundaries: bound q is the first example edge at or after
// q·n/parts (exactly q·n/parts without grouping), so parts may be empty.
func splitParts(sizes []int32, n, parts int) []int {
	b := make([]int, parts+1)
	if sizes == nil {
		for q := range b {
			b[q] = q * n / parts
		}
		return b
	}
	edge, g := 0, 0
	for q := 1; q < parts; q++ {
		for edge < q*n/parts && g < len(sizes) {
			edge += int(sizes[g])
			g++
		}
		b[q] = edge
	}
	b[parts] = n
	return b
}

// eachGroup calls fn with the row range of each example among rows lo..hi−1
// of a block whose examples have the given sizes (nil: one row each); lo
// and hi must be example edges.
func eachGroup(sizes []int32, lo, hi int, fn func(a, b int)) {
	if sizes == nil {
		for i := lo; i < hi; i++ {
			fn(i, i+1)
		}
		return
	}
	at := 0
	for _, k := range sizes {
		if at >= hi {
			return
		}
		if at >= lo {
			fn(at, at+int(k))
		}
		at += int(k)
	}
}

// rowWeights returns each of n rows' weight 1/k (k its example's rows), or
// nil without grouping.
func rowWeights(sizes []int32, n int) []float64 {
	if sizes == nil {
		return nil
	}
	w := make([]float64, n)
	eachGroup(sizes, 0, n, func(a, b int) {
		f := 1 / float64(b-a)
		for i := a; i < b; i++ {
			w[i] = f
		}
	})
	return w
}

// rootWeights returns each of n rows' √(1/k), or nil without grouping: rows
// scaled by it add their example's mean of xxᵀ to a Gram.
func rootWeights(sizes []int32, n int) []float64 {
	w := rowWeights(sizes, n)
	for i := range w {
		w[i] = math.Sqrt(w[i])
	}
	return w
}

// RowWeights returns each row's weight 1/k (k its example's rows), or nil
// when every row is its own example.
func RowWeights(d *Data) []float64 { return rowWeights(d.Groups, d.N) }

// groupScale returns the factor that each residual row of one example
// (rows a..b−1 of r, m values each, features u) is scaled by so that their
// sum Σ_v f·r_v ⊗ u_v is the example's clipped mean gradient:
// f = min(1, lim/‖g‖)/k with g = (1/k)·Σ_v r_v ⊗ u_v and ‖g‖² =
// (1/k²)·Σ_{v,w} (r_v·r_w)(u_v·u_w); lim ≤ 0 does not clip. uu(v) is
// ‖u_v‖² (cached by a caller that has it). For one row it is not called:
// the single-row arithmetic applies.
func groupScale[T float32 | float64](r []T, m int, u func(v int) []T, uu func(v int) float64, a, b int, lim float64) float64 {
	k := float64(b - a)
	f := 1 / k
	if lim <= 0 {
		return f
	}
	var sq float64
	for v := a; v < b; v++ {
		rv := r[v*m : (v+1)*m]
		sq += dot64(rv, rv) * uu(v)
		for w := v + 1; w < b; w++ {
			sq += 2 * dot64(rv, r[w*m:(w+1)*m]) * dot64(u(v), u(w))
		}
	}
	if n := math.Sqrt(math.Max(sq, 0)) / k; n > lim {
		f *= lim / n
	}
	return f
}

// dot64 is x·y accumulated in float64 (float32 products are exact in
// float64): BLAS's dsdot for float32, ddot for float64, both vectorised.
func dot64[T float32 | float64](x, y []T) float64 {
	switch x := any(x).(type) {
	case []float32:
		y := any(y).([]float32)
		return blas32.DDot(blas32.Vector{N: len(x), Data: x, Inc: 1}, blas32.Vector{N: len(x), Data: y, Inc: 1})
	case []float64:
		y := any(y).([]float64)
		return blas64.Dot(blas64.Vector{N: len(x), Data: x, Inc: 1}, blas64.Vector{N: len(x), Data: y, Inc: 1})
	}
	panic("unreachable")
}
