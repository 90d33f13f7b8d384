package audit

import (
	"math/rand/v2"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/preprocessing"
	"github.com/dpfeat/dpfeat/solvers"
)

// transformPrefix starts the names of a feature transform's mechanisms in
// a guarantee (solvers' transform.go).
const transformPrefix = "transform:"

// transformShift is the adaptive shift of a feature transform's releases
// (Config.Transform), the statistic reading them alone:
//
//   - the noisy sum of the unit rows: the canary e₀, clipped to norm
//     ClipMargin, adds ClipMargin at coordinate 0, where D's rows are 0;
//   - the noisy sums of squares, or second-moment matrix, of the centred
//     and renormalised rows y = (x̂ − m̃)/‖x̂ − m̃‖, m̃ the released sum over
//     n: whoever knows D computes its part under both hypotheses — m̃ =
//     s̃/n under D, s̃/(n+1) under D′ (n is public) — so the likelihood
//     ratio's shift is D′'s expected release less D's, the canary's
//     y_c∘y_c or y_c y_cᵀ plus the small change of D's rows' centring, and
//     the base is D's (every entry of the upper triangle: the noise is
//     symmetric).
//
// With v (D×R, a basis's subspace: solvers.TransformSpec.Subspace) the
// matrix is Σuuᵀ, u = Vᵀ(x̂ − m̃)/‖Vᵀ(x̂ − m̃)‖, R×R, and so are its parts.
func transformShift(rows *solvers.Data, v *mat.Dense) func(release string, index int, theta, values []float64) []shiftAt {
	d, n := rows.D, rows.N
	var proj []float64
	r := d // the matrix's side
	if v != nil {
		proj, r = solvers.SubspaceProjection(v), v.RawMatrix().Cols
	}
	margin := preprocessing.ClipMargin
	var sum []float64 // the last released sum
	canary := make([]float64, d)
	canary[0] = 1
	// part returns the releases' expected value over the rows at mean m:
	// Σ y∘y (squares) or Σ yyᵀ.
	part := func(src [][]float64, m []float64, squares bool) []float64 {
		tf := &preprocessing.Transform{Kind: solvers.TransformCenter, In: d, Dims: d, Mean: m}
		if proj != nil && !squares {
			tf.Projection, tf.Dims = proj, r
		}
		out := make([]float64, r*r)
		if squares {
			out = out[:d]
		}
		for _, x := range src {
			row := make([]float64, d)
			for k, v := range x {
				row[k] = float64(float32(v)) // the solvers stream float32 rows
			}
			y := preprocessing.Preprocessing{Transform: tf, Normalize: true, Clip: 1}.Apply(row)
			for i, a := range y {
				if squares {
					out[i] += a * a
					continue
				}
				for j, b := range y {
					out[i*r+j] += a * b
				}
			}
		}
		return out
	}
	var dRows [][]float64
	for i := 0; i < n; i++ {
		dRows = append(dRows, rows.Row(i))
	}
	meanOver := func(k int) []float64 {
		m := make([]float64, d)
		for j, v := range sum {
			m[j] = float64(float32(v / float64(k)))
		}
		return m
	}
	return func(release string, _ int, _, values []float64) []shiftAt {
		switch release {
		case "transform mean":
			sum = append(sum[:0], values...)
			return []shiftAt{{at: 0, shift: margin}}
		case "transform squares", "transform matrix":
			squares := release == "transform squares"
			base := part(dRows, meanOver(n), squares)
			alt := part(append([][]float64{canary}, dRows...), meanOver(n+1), squares)
			var out []shiftAt
			if squares {
				for i := 0; i < d; i++ {
					out = append(out, shiftAt{at: i, shift: alt[i] - base[i], base: base[i]})
				}
				return out
			}
			for i := 0; i < r; i++ {
				for j := i; j < r; j++ {
					out = append(out, shiftAt{at: i*r + j, shift: alt[i*r+j] - base[i*r+j], base: base[i*r+j], offDiag: i != j})
				}
			}
			return out
		}
		return nil
	}
}

// transformClaim is the guarantee of a transform's releases alone, the
// claim its audit is held to.
func transformClaim(g accounting.Guarantee) (accounting.Guarantee, error) {
	var mechs []accounting.Mechanism
	for _, m := range g.Mechanisms {
		if strings.HasPrefix(m.Name, transformPrefix) {
			mechs = append(mechs, m)
		}
	}
	return accounting.Account(mechs, g.Delta, accounting.AccountantGDP, accounting.Options{})
}

// subspaceBasis is the public basis of a Subspace audit: 400 Gaussian
// rows of dimension d whose coordinate 0, the canary's, has ten times the
// spread of the others, so that it leads the basis's top r directions.
func subspaceBasis(d, r int) *solvers.Data {
	rng := rand.New(rand.NewPCG(17, uint64(r)))
	const n = 400
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
		if i%d == 0 {
			x[i] *= 10
		}
	}
	return &solvers.Data{X: x, Y: make([]int32, n), N: n, D: d, M: 1}
}
