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
// With row weights (Data.W; DP-Mix_Diff's soft labels, a pair of rows
// weighted λ and 1 − λ), a row's share of its example is its weight over
// the example's sum of weights instead of 1/k, in the sums and in the
// clipped mean alike.
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

// CheckGroups verifies a grouping of rows (nil: one row per example) and
// the rows' weights (nil: all 1): every example has at least one row, they
// cover exactly the rows, and an example's rows share its label (its
// views) — unless the rows are weighted, where a soft label
// λ·y + (1 − λ)·y′ is two rows of the same features, labels y and y′,
// weights λ and 1 − λ. Weights lie in [0, 1] and an example's sum to more
// than 0; an example's class (what it counts in) is its first row's label.
func CheckGroups(groups []int32, y []int32, w []float64) error {
	if w != nil {
		if groups == nil || len(w) != len(y) {
			return fmt.Errorf("%d row weights for %d rows (grouped: %v); weights belong to grouped rows, one each", len(w), len(y), groups != nil)
		}
		for i, v := range w {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("row %d has weight %v; expected a value in [0, 1]", i, v)
			}
		}
	}
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
		if w != nil {
			if !(weightSum(w[at:at+int(k)]) > 0) {
				return fmt.Errorf("example %d's rows all have weight 0", e)
			}
		} else {
			for i := at + 1; i < at+int(k); i++ {
				if y[i] != y[at] {
					return fmt.Errorf("rows %d and %d of one example have different labels; an example's views share its label", at, i)
				}
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
// (nil: one row per example, of n rows in all) and the runs' row weights
// (Data.W; nil: every row weighs 1).
type groupWalk struct {
	sizes []int32
	w     []float64
	g     int // next example
	row   int // next row
	left  int // rows not handed out (ungrouped)
}

func newGroupWalk(sizes []int32, w []float64, n int) *groupWalk {
	return &groupWalk{sizes: sizes, w: w, left: n}
}

// weights returns the weights of the next n rows (nil without weights).
func (w *groupWalk) weights(n int) []float64 {
	at := w.row
	w.row += n
	if w.w == nil {
		return nil
	}
	return w.w[at:w.row]
}

// next returns the rows of the next run — whole examples, as many as fit
// in want rows but at least one (exactly want rows without grouping,
// unless the data ends first) — their sizes (nil without grouping) and
// their weights (nil without weights). 0 rows: the end.
func (w *groupWalk) next(want int) (rows int, sizes []int32, wts []float64) {
	if w.sizes == nil {
		k := min(want, w.left)
		w.left -= k
		return k, nil, w.weights(k)
	}
	g0 := w.g
	for w.g < len(w.sizes) && (w.g == g0 || rows+int(w.sizes[w.g]) <= want) {
		rows += int(w.sizes[w.g])
		w.g++
	}
	return rows, w.sizes[g0:w.g], w.weights(rows)
}

// take returns the sizes and weights of the examples in the next n rows,
// which must end on an example's last row (the Rows contract).
func (w *groupWalk) take(n int) ([]int32, []float64, error) {
	if w.sizes == nil {
		w.left -= n
		return nil, w.weights(n), nil
	}
	g0, rows := w.g, 0
	for w.g < len(w.sizes) && rows < n {
		rows += int(w.sizes[w.g])
		w.g++
	}
	if rows != n {
		return nil, nil, fmt.Errorf("a block of %d rows splits an example (Rows.Each must hand out whole examples)", n)
	}
	return w.sizes[g0:w.g], w.weights(n), nil
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

// rowWeights returns each of n rows' share of its example: w_r/Σ w over
// the example's rows (1/k for an example of k rows without weights), or
// nil without grouping.
func rowWeights(sizes []int32, w []float64, n int) []float64 {
	if sizes == nil {
		return nil
	}
	out := make([]float64, n)
	eachGroup(sizes, 0, n, func(a, b int) {
		if w == nil {
			f := 1 / float64(b-a)
			for i := a; i < b; i++ {
				out[i] = f
			}
			return
		}
		sum := weightSum(w[a:b])
		for i := a; i < b; i++ {
			out[i] = w[i] / sum
		}
	})
	return out
}

// rootWeights returns √ of each of n rows' rowWeights, or nil without
// grouping: rows scaled by it add their example's weighted mean of xxᵀ to
// a Gram.
func rootWeights(sizes []int32, w []float64, n int) []float64 {
	out := rowWeights(sizes, w, n)
	for i := range out {
		out[i] = math.Sqrt(out[i])
	}
	return out
}

// RowWeights returns each row's share of its example (rowWeights), or nil
// when every row is its own example.
func RowWeights(d *Data) []float64 { return rowWeights(d.Groups, d.W, d.N) }

// clipGroup scales the residual rows of one example (rows a..b−1 of r, m
// values each, features u) so that their sum Σ_v r_v ⊗ u_v is the
// example's clipped weighted mean gradient: g = Σ_v f_v·r_v ⊗ u_v, with
// f_v = w_v/Σ w the rows' shares (w: the weights of the rows of r, Data.W;
// nil: f_v = 1/k), has
// ‖g‖² = Σ_{v,w} f_v f_w (r_v·r_w)(u_v·u_w), and each row is scaled by
// f_v·min(1, lim/‖g‖); lim ≤ 0 does not clip. uu(v) is ‖u_v‖² (cached
// by a caller that has it). For one row it is not called: the single-row
// arithmetic applies.
func clipGroup[T float32 | float64](r []T, m int, u func(v int) []T, uu func(v int) float64, a, b int, lim float64, w []float64) {
	// ‖Σ_v f_v·r_v ⊗ u_v‖² with the given factors f.
	normSq := func(f func(v int) float64) float64 {
		var sq float64
		for v := a; v < b; v++ {
			rv := r[v*m : (v+1)*m]
			sq += f(v) * f(v) * dot64(rv, rv) * uu(v)
			for j := v + 1; j < b; j++ {
				sq += 2 * f(v) * f(j) * dot64(rv, r[j*m:(j+1)*m]) * dot64(u(v), u(j))
			}
		}
		return math.Max(sq, 0)
	}
	if w == nil {
		// Equal shares: the common factor 1/k taken out of the sum.
		k := float64(b - a)
		f := 1 / k
		if lim > 0 {
			if n := math.Sqrt(normSq(func(int) float64 { return 1 })) / k; n > lim {
				f *= lim / n
			}
		}
		scaleRows(r[a*m:b*m], T(f))
		return
	}
	sum := weightSum(w[a:b])
	share := func(v int) float64 { return w[v] / sum }
	c := 1.0
	if lim > 0 {
		if n := math.Sqrt(normSq(share)); n > lim {
			c = lim / n
		}
	}
	for v := a; v < b; v++ {
		scaleRows(r[v*m:(v+1)*m], T(c*share(v)))
	}
}

// weightSum is the sum of an example's row weights: a row's share of its
// example is its weight over it.
func weightSum(w []float64) float64 {
	var sum float64
	for _, v := range w {
		sum += v
	}
	return sum
}

func scaleRows[T float32 | float64](r []T, f T) {
	for j := range r {
		r[j] *= f
	}
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
