package solvers

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/internal/bigmem"
	"github.com/dpfeat/dpfeat/preprocessing"
)

// Transform kinds (TransformSpec.Kind).
const (
	TransformNone        = "none"
	TransformCenter      = "center"
	TransformStandardize = "standardize"
	TransformPCA         = "pca"
	TransformWhiten      = "whiten"
)

// Whitening ridges (TransformSpec.Ridge): how whiten sets the ν it adds
// to every eigenvalue.
const (
	// RidgeNoise (the default): ν = 2√D·σ/n, the expected spectral norm of
	// the second-moment release's noise, so that directions below the
	// noise are damped rather than amplified (AdaSSP's choice).
	RidgeNoise = "noise"
	// RidgeSample: ν = 4/√(n·D), twice the expected spectral norm of the
	// sampling error of the second moment of n unit rows spread over D
	// directions (2√(D/n)·1/D, the Marchenko–Pastur edge), whatever the
	// release's noise: every direction is equalised but those a sample of
	// n cannot tell apart. n is the training rows' count (the method's
	// fit is what the ridge guards) even when the statistics come from
	// public or basis rows. Auto's choice in the small-data band (#41,
	// ChooseAuto).
	RidgeSample = "sample"
)

// TransformRidges lists the ridges, for help texts.
var TransformRidges = []string{RidgeNoise, RidgeSample}

// TransformKinds lists the kinds, for help texts.
var TransformKinds = []string{TransformNone, TransformCenter, TransformStandardize, TransformPCA, TransformWhiten}

// TransformSpec asks a fit to learn a linear feature transform before its
// method runs (preprocessing.Transform): the method then trains on the
// transformed, renormalised rows, and the classifier stores the transform
// and applies it to every row it scores.
//
// Why: features of images unlike an encoder's training data are nearly
// parallel after unit normalisation — their mean has norm ≈ 0.95 and one
// direction holds most of the energy — so the class signal is a small part
// of each row's norm budget C while every release's noise is calibrated
// to C. Centring and renormalising spends the budget on what differs
// between rows; whitening spreads it over the directions the data use.
//
// Kinds, each on x̂ = x/‖x‖, with m the mean of x̂ and y = (x̂ − m)/‖x̂ − m‖
// the centred rows renormalised:
//
//   - center: t = x̂ − m (Tramèr & Boneh 2021, "Differentially Private
//     Learning Needs Better Features", normalise with private statistics;
//     Tang et al. 2024, DP-RandP App. G, centre on a Gaussian-mechanism
//     mean);
//   - standardize: t = (x̂ − m)/√(v + τ), v the per-coordinate second
//     moment of y;
//   - pca: t = Vₖᵀ(x̂ − m), Vₖ the eigenvectors of the second-moment matrix
//     S = Σyyᵀ/n whose eigenvalues exceed the release's expected spectral
//     noise ν = 2√D·σ_S/n (at most Dims), as AdaSSP sets its ridge from
//     the noise level (Wang 2018, "Revisiting differentially private
//     linear regression");
//   - whiten: t = (Λ + ν)^(−½)Vᵀ(x̂ − m) over all D directions (or the top
//     Dims): directions well above the noise are equalised, those below it
//     damped rather than amplified; with RidgeSample ν = 4/√(n·D) instead,
//     the sampling error of S alone, and every direction above it is
//     equalised (measured better for DPPL-Mean and DP-SGD at n·μ below
//     ≈ 700 on shifted features, and for DP-SGD and DP-FC at every n·μ
//     with at most 16·D rows, #41; see ChooseAuto).
//
// S is the Gaussian mechanism on Σyyᵀ ("Analyze Gauss", Dwork, Talwar,
// Thakurta & Zhang 2014; the release DP-LS's G and DP-FC's covariance
// are). The method renormalises t. With Public set, every statistic comes
// from public rows at no privacy cost (PCA from public data, as in Tramèr
// & Boneh and DPPL's public set), with τ and ν still those the private
// releases would have (RidgeSample's ν that of the training rows' count):
// how much of the spectrum to trust depends on the noise and the sample
// the method faces. For a non-private reference the statistics are
// the training rows' exactly.
//
// Privacy: x̂ has norm ≤ 1, so Σx̂ (L2), Σx̂∘x̂ (L2: ‖x̂∘x̂‖ ≤ ‖x̂‖²) and
// Σx̂x̂ᵀ (Frobenius) each have sensitivity 1 under add/remove. The
// releases take Share of the budget in GDP's μ² — noise multiplier
// z*/√(Share·wᵢ/Σw) for release i, z* the multiplier one release would
// need for the whole target, weights 1 for the mean and the squares, 3
// for the matrix — and are charged before their noise is drawn; the
// method is then calibrated so that its releases and these together meet
// the target in one composition (exact in GDP for the full-batch
// methods). The rows the method sees are a per-example function of x and
// the released statistics, so its sensitivities are unchanged.
type TransformSpec struct {
	// Kind is one of TransformKinds; "" is none.
	Kind string
	// Dims caps the number of principal directions kept (pca, whiten); 0
	// keeps every direction above the noise.
	Dims int
	// Share is the share of the budget (of μ²) the private releases take;
	// 0 is DefaultTransformShare(Kind).
	Share float64
	// Public, when set, is where the transform is learned: public rows
	// (prepared like the training rows), free of privacy cost; PublicName
	// names them in the guarantee.
	Public     PublicSource
	PublicName string
	// Basis, when set and Public is not, gives pca and whiten their
	// principal directions: those of these public rows (centred on their
	// own mean), such as the encoder's own training data, public by
	// construction. The mean is still the private rows' (one Gaussian
	// release, the transform's share, by default centring's), since a
	// shift of the data moves it; only the mean costs privacy. Measured
	// (#41, bench/results/shift-small.md): at n ≈ 600 the top
	// directions of a private second-moment matrix are mostly noise,
	// while those of the encoder's public features keep the classes of
	// shifted images apart. BasisName names them in the guarantee.
	Basis     PublicSource
	BasisName string
	// Subspace, with Basis and Kind whiten, keeps the basis's top Dims
	// directions (DefaultSubspaceDims when 0) as a subspace only: the
	// second-moment matrix of the centred rows projected onto it and
	// renormalised there (R×R) is a private release, and the whitening is
	// learned there from it. The release is the Gaussian mechanism on
	// Σuuᵀ, u = Vᵀ(x̂ − m)/‖Vᵀ(x̂ − m)‖, V the D×R orthonormal basis
	// directions, sensitivity 1 since ‖u‖ ≤ 1; its noise's spectral norm
	// grows as √R rather than √D, and the
	// classes of shifted images lie mostly in the encoder's own top
	// directions (82–98% of their between-class energy in the top 32 for
	// every shift of bench/shift.sh), while the basis's eigenvalues, which
	// Basis alone whitens by, are not those of shifted rows. The share is
	// the whitening's (DefaultTransformShare), split as a private one's.
	Subspace bool
	// Prior, with Basis and Kind whiten (not Subspace), keeps the private
	// whitening in all D directions — the mean and the D×D matrix
	// released as without a basis, from the same share — and averages
	// the released second-moment matrix with the basis rows' (centred on
	// their own mean, renormalised), S = (S_private + S_basis)/2, before
	// the whitening is learned from it: the basis as a prior worth as
	// many rows as the private data, which fills in the directions
	// whose private estimate is mostly noise. Post-processing of the
	// release with public rows: nothing more is charged. Measured (#41,
	// bench/results/shift-prior.md) with DP-SGD at n ≈ 600 and 2,000: it
	// gained on images far from the encoder's and lost on near ones, so
	// auto does not use it (ChooseAuto).
	Prior bool
	// Ridge is whiten's ridge ν, one of TransformRidges; "" is RidgeNoise.
	Ridge string
	// Gate, when > 0 (a pca or whiten, not from Basis), makes the second
	// stage conditional on the mean. From Public rows the mean is exact
	// (no release) and the test reads ‖m‖² itself. Private: only when
	// ‖m‖², estimated from the noisy sum (‖Σx̂ + noise‖²/n² less the
	// noise's expected D·σ²/n²), is at least Gate — the features are
	// concentrated, as those of images unlike the encoder's data are — is
	// the second-moment matrix released and the transform learned. Below
	// it the fit has no transform, and the matrix's share of the budget
	// goes to the method. The test reads a release only (post-processing);
	// the releases that follow it are chosen from it, which Gaussian DP
	// allows as long as the squares of their μ sum to the target on every
	// path (Smith & Thakurta 2022, "Fully adaptive composition for Gaussian
	// differential privacy": a filter with the nonadaptive parameters):
	// the method is calibrated to what is left either way. auto's rule
	// from n·μ = 60 to 100, and below 60 with public features
	// (ChooseAuto).
	Gate float64
	// Clusters, when > 0, with Public and Kind whiten: after the
	// whitening keep only the span of Clusters centres of spherical
	// k-means on the public rows as it maps them (renormalised), an
	// orthonormal basis of it composed with the whitening — the method
	// sees at most Clusters dimensions instead of D. Learned from public
	// rows: free. The class means of images like the public ones lie
	// near the span, while a private method's noise is spread over every
	// whitened direction, so the span keeps most of the signal and
	// √(Clusters/D) of the noise's norm (span.go; auto's rule with public
	// features, ChooseAuto).
	Clusters int
	// Distill, with Public: after the method, replace its classifier by
	// a linear head fitted on the public rows, each labelled by the
	// classifier (distill.go). The head sees the rows through the whole
	// transform, without the Clusters span the method was fitted in.
	// Post-processing: free. auto's rule with public features
	// (ChooseAuto).
	Distill bool
}

// clusters reports whether the spec keeps its public rows' cluster span
// (Clusters).
func (s TransformSpec) clusters() bool {
	return s.Clusters > 0 && s.Public != nil && s.Kind == TransformWhiten
}

// gated reports whether the spec's second stage waits on the mean
// (Gate).
func (s TransformSpec) gated() bool {
	return s.Gate > 0 && (s.Public != nil || s.Basis == nil) && (s.Kind == TransformPCA || s.Kind == TransformWhiten)
}

// basis reports whether the spec takes its directions from Basis.
func (s TransformSpec) basis() bool {
	return s.Basis != nil && s.Public == nil && !s.Prior && (s.Kind == TransformPCA || s.Kind == TransformWhiten)
}

// prior reports whether the spec mixes Basis's second-moment matrix
// into its private one (Prior).
func (s TransformSpec) prior() bool {
	return s.Prior && s.Basis != nil && s.Public == nil && !s.Subspace && s.Kind == TransformWhiten
}

// subspace reports whether the spec whitens privately within the basis's
// top directions (Subspace).
func (s TransformSpec) subspace() bool { return s.Subspace && s.basis() && s.Kind == TransformWhiten }

// subspaceDims is how many of the basis's directions a Subspace spec
// keeps for rows of dimension d: Dims, or DefaultSubspaceDims, at most d.
func (s TransformSpec) subspaceDims(d int) int {
	return min(cmp.Or(s.Dims, DefaultSubspaceDims), d)
}

// DefaultSubspaceDims is how many of the basis's top directions a
// Subspace whitening keeps by default.
const DefaultSubspaceDims = 32

// Enabled reports whether a transform is asked for.
func (s TransformSpec) Enabled() bool { return s.Kind != "" && s.Kind != TransformNone }

// meanShare is the share of the budget the mean's release takes within
// a pca or whiten transform's.
func (s TransformSpec) meanShare() float64 {
	shares, _ := s.releaseShares(true)
	return shares[0]
}

// releaseShares splits the spec's share among its private releases by
// their weights and names them: the mean's, and the second stage's unless
// centring only (matrix: the second-moment matrix, else a standardize
// spec's sums of squares).
func (s TransformSpec) releaseShares(matrix bool) ([]float64, []string) {
	weights, names := []float64{weightMean}, []string{"transform: noisy feature sum"}
	switch {
	case matrix:
		weights, names = append(weights, weightMatrix), append(names, "transform: noisy second-moment matrix of the centred rows")
	case s.Kind == TransformStandardize:
		weights, names = append(weights, weightSquares), append(names, "transform: noisy sums of squares of the centred rows")
	}
	var all float64
	for _, w := range weights {
		all += w
	}
	shares := make([]float64, len(weights))
	for i, w := range weights {
		shares[i] = s.share() * w / all
	}
	return shares, names
}

// share is the budget share the spec's private releases take.
func (s TransformSpec) share() float64 {
	switch {
	case s.Share != 0:
		return s.Share
	case s.basis() && !s.subspace():
		return DefaultTransformShare(TransformCenter) // the mean alone is private
	}
	return DefaultTransformShare(s.Kind)
}

// DefaultTransformShare is the share of the budget a private transform of
// the kind takes by default.
func DefaultTransformShare(kind string) float64 {
	switch kind {
	case TransformCenter:
		return 0.05
	case TransformStandardize:
		return 0.1
	}
	return 0.2
}

// CheckTransform validates a transform request for a method.
func CheckTransform(m Method, s TransformSpec) error {
	if !s.Enabled() {
		switch {
		case s.Distill:
			return fmt.Errorf("a distilled head (--distill) is fitted through a transform: give one (--transform)")
		case s.Clusters != 0:
			return fmt.Errorf("a cluster span (--transform-clusters) applies to whiten: give --transform whiten")
		}
		return nil
	}
	if !slices.Contains(TransformKinds, s.Kind) {
		return fmt.Errorf("unknown transform %q (known: %v)", s.Kind, TransformKinds)
	}
	if s.Dims < 0 {
		return fmt.Errorf("transform dimensions must be ≥ 0, got %d", s.Dims)
	}
	if s.Ridge != "" && !slices.Contains(TransformRidges, s.Ridge) {
		return fmt.Errorf("unknown transform ridge %q (known: %v)", s.Ridge, TransformRidges)
	}
	if s.Ridge != "" && s.Kind != TransformWhiten {
		return fmt.Errorf("a ridge (--transform-ridge) applies to whiten only, not %s", s.Kind)
	}
	if s.Share != 0 {
		if err := accounting.CheckFraction("the transform's share of the budget", s.Share); err != nil {
			return err
		}
	}
	switch {
	case s.Gate < 0 || s.Gate >= 1 || math.IsNaN(s.Gate):
		return fmt.Errorf("the transform's gate is a squared norm of a mean of unit rows, in [0, 1), got %v", s.Gate)
	case s.Gate > 0 && !s.gated():
		return fmt.Errorf("a gate applies to a pca or whiten learned from the training rows or public ones, not %s from basis rows", s.Kind)
	case s.Subspace && s.Prior:
		return fmt.Errorf("a basis subspace and a basis prior are two uses of the basis: give one")
	case s.Subspace && !s.subspace():
		return fmt.Errorf("a basis subspace applies to whiten with basis features (--transform-basis) and no public features, not %s", s.Kind)
	case s.Prior && s.Kind != TransformWhiten:
		return fmt.Errorf("a basis prior applies to whiten, not %s", s.Kind)
	case s.Prior && !s.prior():
		return fmt.Errorf("a basis prior needs basis features (--transform-basis) and no public features")
	case s.Clusters < 0:
		return fmt.Errorf("the transform's clusters must be ≥ 0, got %d", s.Clusters)
	case s.Clusters > 0 && s.Kind != TransformWhiten:
		return fmt.Errorf("a cluster span (--transform-clusters) applies to whiten, not %s", s.Kind)
	case s.Clusters > 0 && s.Public == nil:
		return fmt.Errorf("a cluster span (--transform-clusters) is learned from public features: give them (--public)")
	case s.Distill && s.Public == nil:
		return fmt.Errorf("a distilled head (--distill) is fitted on public features: give them (--public)")
	}
	if m.Private && m.Pure && s.Public == nil {
		return fmt.Errorf("%s is pure ε-DP and a private transform uses the Gaussian mechanism: learn it from public features (--public) or use --transform none", m.Name)
	}
	return nil
}

// The releases' weights in the transform's share: the mean's, and the
// second stage's (the sums of squares, or the second-moment matrix).
const (
	weightMean    = 1.0
	weightSquares = 1.0
	weightMatrix  = 3.0
)

// visitRows calls fn with each row of a source, unit-normalised and
// clipped to norm 1·ClipMargin (so that ‖x̂‖ ≤ 1 however it is rounded),
// or, when t is not nil, mapped by t and renormalised: training rows
// (Rows) or public rows (PublicSource), with its weight w: its share of
// its example (1/k for a row of an example of k rows; groups.go), else 1. It returns the number of
// examples.
type visitRows func(ctx context.Context, t *preprocessing.Transform, fn func(x []float64, w float64)) (n int64, err error)

func visitTraining(rows Rows) visitRows {
	return func(ctx context.Context, t *preprocessing.Transform, fn func(x []float64, w float64)) (int64, error) {
		D := rows.Dim()
		row := make([]float64, D)
		walk := newGroupWalk(rows.Groups(), rows.Weights(), int(rows.Len()))
		err := rows.Each(func(x []float32, y []int32) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			sizes, wts, err := walk.take(len(y))
			if err != nil {
				return err
			}
			share := rowWeights(sizes, wts, len(y))
			for i := range y {
				for k, v := range x[i*D : (i+1)*D] {
					row[k] = float64(v)
				}
				w := 1.0
				if share != nil {
					w = share[i]
				}
				fn(unitRow(t, row), w)
			}
			return nil
		})
		return ExamplesOf(rows), err
	}
}

func visitPublic(src PublicSource) visitRows {
	return func(ctx context.Context, t *preprocessing.Transform, fn func(x []float64, w float64)) (int64, error) {
		D := src.Dim()
		var n int64
		row := make([]float64, D)
		err := src.Each(func(block []float64, rows int) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			for i := 0; i < rows; i++ {
				copy(row, block[i*D:(i+1)*D])
				fn(unitRow(t, row), 1)
			}
			n += int64(rows)
			return nil
		})
		return n, err
	}
}

// unitRow is x̂ (t nil) or t's renormalised output, of norm ≤ 1.
func unitRow(t *preprocessing.Transform, row []float64) []float64 {
	return Preprocessing{Transform: t, Normalize: true, Clip: 1}.Apply(row)
}

// learnTransform learns o.Transform on the training rows (or its public
// rows) for method m, making and charging the private releases; nil when
// no transform is asked for.
//
// Two stages, each a pass: the mean m of x̂; then, for standardize, pca
// and whiten, the statistics of y = (x̂ − m)/‖x̂ − m‖, the centred rows
// renormalised — the rows the method will see, up to the linear map being
// learned — of norm 1 again, so the second stage's sensitivity is 1 and
// its signal is not the small residual x̂ − m (centred shifted features
// keep ≈ 10% of their energy: a release of Σx̂x̂ᵀ buries it in noise; on
// the inverted-pixel proxy at ε = 1, DP-LS after PCA from it scored 0.316,
// after centring alone 0.673).
func learnTransform(ctx context.Context, m Method, rows Rows, o *Options) (*preprocessing.Transform, error) {
	spec := o.Transform
	if err := CheckTransform(m, spec); err != nil {
		return nil, err
	}
	if !spec.Enabled() {
		return nil, nil
	}
	if o.NoNormalize {
		return nil, fmt.Errorf("a transform works on unit-normalised features: drop --no-normalize or use --transform none")
	}
	D := rows.Dim()
	matrix := spec.Kind == TransformPCA || spec.Kind == TransformWhiten
	if matrix {
		if err := o.squares(D, D, 4); err != nil {
			return nil, err
		}
	}
	// The statistics are sums over the public rows, or over the training
	// rows (Options.pass: here, or elsewhere).
	var public visitRows
	private := m.Private
	if spec.Public != nil {
		public, private = visitPublic(progressSource{spec.Public, "transform: the public rows' statistics", o.progress}), false
	}
	// The releases' noise std, the mean's first. A public transform of a
	// private Gaussian method is regularised as the private one would be
	// (τ, ν below): how much of the spectrum to trust depends on the noise
	// the method faces, not only on the transform's. A pure ε-DP method
	// has no Gaussian release to compare with (and may have δ = 0): its
	// public transform is exact.
	var stds []float64
	var deferred []accounting.Mechanism // a gated spec's matrix, charged once the gate opens
	if m.Private && !m.Pure {
		var mechs []accounting.Mechanism
		var err error
		if stds, mechs, err = transformReleases(o, spec, matrix); err != nil {
			return nil, err
		}
		if spec.basis() && !spec.subspace() {
			// The mean alone is released, from the whole share; the
			// second stage keeps the noise level a private matrix of the
			// kind's default share would have (stds[1]), for ν.
			mean, mm, err := transformReleases(o, TransformSpec{Kind: TransformCenter, Share: spec.share()}, false)
			if err != nil {
				return nil, err
			}
			stds[0], mechs = mean[0], mm
		}
		if private {
			if spec.gated() && !o.rel.DryRun() {
				mechs, deferred = mechs[:1], mechs[1:]
			}
			if err := chargeTransform(o, mechs); err != nil {
				return nil, err
			}
		}
	}
	if o.rel.DryRun() {
		// The cost is known (the releases are in o.prior) and the method
		// needs rows of some transform to reach its calibration.
		return &preprocessing.Transform{Kind: TransformCenter, Source: "private", In: D, Dims: D, Mean: make([]float64, D)}, nil
	}
	// Stage 1: the mean.
	var sum []float64
	var total int64
	var err error
	if public == nil {
		sum, err = o.pass(ctx, rows, Pass{Kind: PassTransformMean}, D)
		total = ExamplesOf(rows)
	} else {
		sum, total, err = transformMean(ctx, public, D)
	}
	if err != nil {
		return nil, err
	}
	if spec.Public != nil && total < 2 {
		return nil, fmt.Errorf("the public features have %d rows; a transform needs at least 2", total)
	}
	n := float64(total)
	if private {
		used := o.Gaussian("transform mean", sum, stds[0], 1)
		o.released("transform mean", 0, used, sum)
		if n, err = o.Rows(total); err != nil {
			return nil, err
		}
		if spec.gated() {
			open, err := transformGate(o, spec, sum, math.Max(n, 1), used, deferred)
			if err != nil || !open {
				return nil, err
			}
		}
	} else if spec.gated() { // public rows: their exact mean, nothing to charge
		if open, err := transformGate(o, spec, sum, math.Max(n, 1), 0, nil); err != nil || !open {
			return nil, err
		}
	}
	n = math.Max(n, 1)
	// RidgeSample's ν is set by the training rows' count, whatever rows
	// the statistics come from: it guards the method's fit on them.
	train := n
	if public != nil {
		if train, err = o.Rows(ExamplesOf(rows)); err != nil {
			return nil, err
		}
		train = math.Max(train, 1)
	}
	t := &preprocessing.Transform{Kind: TransformCenter, Source: "private", In: D, Dims: D, Mean: make([]float64, D)}
	if spec.Public != nil {
		t.Source = "public"
	}
	for j, v := range sum {
		t.Mean[j] = float64(float32(v / n))
	}
	if spec.Kind == TransformCenter {
		return t, t.Check(D)
	}
	// Stage 2: the centred, renormalised rows' sums of squares or
	// second-moment matrix.
	std := 0.0 // the second release's noise std (a public transform: what it would be)
	if stds != nil {
		std = stds[1]
	}
	if spec.subspace() {
		return t, subspaceStage(ctx, rows, t, spec, n, train, std, private, o)
	}
	if spec.basis() {
		// The directions of the public basis rows, centred on their own
		// mean: no release.
		basis := visitPublic(spec.Basis)
		bsum, bn, err := basisMean(ctx, basis, D)
		if err != nil {
			return nil, err
		}
		// whiten damps the directions below the private noise level ν
		// the method faces (std relative to the private n, as the basis
		// holds bn rows); pca keeps exactly Dims public directions (or
		// every one above ν without Dims).
		bstd := std * float64(bn) / n
		if spec.Kind == TransformPCA && spec.Dims > 0 {
			bstd = 0
		}
		return t, secondStage(ctx, rows, basis, bsum, t, spec, float64(bn), train, bstd, false, o)
	}
	if err := secondStage(ctx, rows, public, t.Mean, t, spec, n, train, std, private, o); err != nil || !spec.clusters() {
		return t, err
	}
	switch pub := spec.Public.Rows(); {
	case spec.Clusters >= t.OutDim(t.In): // the span would be every direction
		o.Transform.Clusters = 0
		return t, nil
	case pub < spec.Clusters:
		o.note("transform: the %d public rows are fewer than the %d clusters asked for; the whitening keeps all its directions", pub, spec.Clusters)
		o.Transform.Clusters = 0
		return t, nil
	}
	whole := *t // clusterSpan replaces the projection, not its values
	o.whole = &whole
	return t, clusterSpan(ctx, spec.Public, t, spec.Clusters, o)
}

// basisPrior is a Prior spec's mix (TransformSpec.Prior): it replaces
// stat, the training rows' (released) sum of yyᵀ over n rows, by
// n·(stat/n + B)/2, B the basis rows' second-moment matrix (of their
// rows centred on their own mean and renormalised), and returns the
// mix's noise std, std/2. No release: the basis is public.
func basisPrior(ctx context.Context, spec TransformSpec, stat []float64, n, std float64) (float64, error) {
	gram, bn, err := basisGram(ctx, spec.Basis)
	if err != nil {
		return 0, err
	}
	w := n / float64(bn)
	for i := range stat {
		stat[i] = (stat[i] + w*gram[i]) / 2
	}
	return std / 2, nil
}

// transformGate is a gated spec's test (TransformSpec.Gate) on the noisy
// sum of n unit rows, each coordinate's noise of std (0 for public rows'
// exact sum): it records the outcome, and charges the second stage's
// releases (deferred) when the gate opens.
func transformGate(o *Options, spec TransformSpec, sum []float64, n, std float64, deferred []accounting.Mechanism) (bool, error) {
	var ss float64
	for _, v := range sum {
		ss += v * v
	}
	est := (ss - float64(len(sum))*std*std) / (n * n)
	if est < spec.Gate {
		o.gate = fmt.Sprintf("closed: ‖m‖² ≈ %.2f < %g, no transform", est, spec.Gate)
		o.note("transform gate %s", o.gate)
		return false, nil
	}
	o.gate = fmt.Sprintf("open: ‖m‖² ≈ %.2f ≥ %g", est, spec.Gate)
	o.note("transform gate %s", o.gate)
	return true, chargeTransform(o, deferred)
}

// transformMean sums the rows' unit x̂ (D values each, weighted by its share of its
// example) and counts the examples.
func transformMean(ctx context.Context, visit visitRows, D int) ([]float64, int64, error) {
	sum := make([]float64, D)
	total, err := visit(ctx, nil, func(x []float64, w float64) {
		if w == 1 {
			floatsAdd(sum, x)
			return
		}
		for j, v := range x {
			sum[j] += w * v
		}
	})
	return sum, total, err
}

// transformSecond sums, over the rows centred on mean and renormalised,
// y∘y (matrix false) or yyᵀ (true, D×D), each row weighted by its share of
// its example. With proj (R×D, row-major; matrix only) the rows are
// y = P(x̂ − mean)/‖P(x̂ − mean)‖ instead and the sum is R×R.
func transformSecond(ctx context.Context, visit visitRows, mean, proj []float64, matrix bool) ([]float64, error) {
	D := len(mean)
	center := &preprocessing.Transform{Kind: TransformCenter, In: D, Dims: D, Mean: mean}
	if proj != nil {
		center.Projection, center.Dims = proj, len(proj)/D
	}
	R := center.Dims
	var sq []float64
	var acc *gramAcc
	row32 := make([]float32, R)
	if matrix {
		acc = newGramAcc(R, 2) // pushed blocks are split in two SYRKs
	} else {
		sq = make([]float64, D)
	}
	_, err := visit(ctx, center, func(y []float64, w float64) {
		if acc == nil {
			for j, v := range y {
				sq[j] += w * v * v
			}
			return
		}
		f := math.Sqrt(w) // rows of an example add the mean of their yyᵀ
		for j, v := range y {
			row32[j] = float32(f * v)
		}
		acc.push(row32)
	})
	if err != nil {
		return nil, err
	}
	if matrix {
		return acc.result(), nil
	}
	return sq, nil
}

// secondStage makes the second statistic over the rows centred and
// renormalised — Σy∘y (standardize) or Σyyᵀ (pca, whiten), over the
// public rows centred on center (t.Mean, or a Basis's own mean) or
// (public nil) the training rows centred on t.Mean — releases it with
// noise std when private, sets t's scale or projection from it, rounded
// to float32 as a classifier file stores them, and checks t.
func secondStage(ctx context.Context, rows Rows, public visitRows, center []float64, t *preprocessing.Transform, spec TransformSpec, n, train, std float64, private bool, o *Options) error {
	D := t.In
	matrix := spec.Kind != TransformStandardize
	var stat []float64
	var err error
	if public == nil {
		p, size := Pass{Kind: PassTransformSquares, Mean: t.Mean}, D
		if matrix {
			p.Kind, size = PassTransformMatrix, D*D
		}
		stat, err = o.pass(ctx, rows, p, size)
	} else {
		stat, err = transformSecond(ctx, public, center, nil, matrix)
	}
	if err != nil {
		return err
	}
	if matrix {
		if private {
			used := o.Symmetric("transform matrix", stat, D, std, 1)
			o.released("transform matrix", 0, used, stat)
			std = used
		}
		if spec.prior() {
			if std, err = basisPrior(ctx, spec, stat, n, std); err != nil {
				return err
			}
		}
		err = principal(t, spec, stat, n, train, std)
	} else {
		if private {
			used := o.Gaussian("transform squares", stat, std, 1)
			o.released("transform squares", 0, used, stat)
			std = used
		}
		standardize(t, stat, n, std)
	}
	roundStored(t)
	if err != nil {
		return err
	}
	return t.Check(D)
}

// roundStored rounds t's scale and projection to float32, as a classifier
// file stores them, so that the fit scores its rows as a loaded
// classifier will.
func roundStored(t *preprocessing.Transform) {
	for _, s := range [][]float64{t.Scale, t.Projection} {
		for i, v := range s {
			s[i] = float64(float32(v))
		}
	}
}

// subspaceStage is a Subspace spec's second stage: the basis's top R
// directions V (of its rows centred on their own mean, no release), the
// training rows' second-moment matrix of u = Vᵀ(x̂ − m)/‖Vᵀ(x̂ − m)‖, m
// = t.Mean — the rows renormalised within the subspace, so that the
// matrix has sensitivity 1 and holds their whole norm, not the 76–98% of
// it the subspace keeps of the rows renormalised in all D (measured
// better, #41) — released with noise std when private, and t's
// projection: the whitening of that R×R matrix (principal) composed with
// Vᵀ.
func subspaceStage(ctx context.Context, rows Rows, t *preprocessing.Transform, spec TransformSpec, n, train, std float64, private bool, o *Options) error {
	D := t.In
	R := spec.subspaceDims(D)
	v, err := SubspaceDirections(ctx, spec.Basis, R)
	if err != nil {
		return err
	}
	stat, err := o.pass(ctx, rows, Pass{Kind: PassTransformMatrix, Mean: t.Mean, Projection: SubspaceProjection(v)}, R*R)
	if err != nil {
		return err
	}
	if private {
		used := o.Symmetric("transform matrix", stat, R, std, 1)
		o.released("transform matrix", 0, used, stat)
		std = used
	}
	w := &preprocessing.Transform{In: R, Dims: R}
	if err := principal(w, spec, stat, n, train, std); err != nil {
		return err
	}
	var p mat.Dense // whiten keeps all R directions (principal)
	p.Mul(mat.NewDense(w.Dims, R, w.Projection), v.T())
	t.Kind, t.Dims, t.Projection = TransformWhiten, w.Dims, p.RawMatrix().Data
	roundStored(t)
	return t.Check(D)
}

// SubspaceDirections returns the top R principal directions (D×R,
// orthonormal columns, ascending in eigenvalue) of the basis rows, unit
// and centred on their own mean and renormalised as the training rows
// are: the subspace a Subspace spec whitens in. No release: the basis is
// public.
func SubspaceDirections(ctx context.Context, src PublicSource, R int) (*mat.Dense, error) {
	D := src.Dim()
	gram, _, err := basisGram(ctx, src)
	if err != nil {
		return nil, err
	}
	_, vecs, err := symEig(gram, D)
	if err != nil {
		return nil, fmt.Errorf("transform: the basis's second-moment matrix: %w", err)
	}
	dirs := mat.NewDense(D, R, nil)
	for c := 0; c < R; c++ {
		for j, v := range vecs[(D-R+c)*D : (D-R+c+1)*D] {
			dirs.Set(j, c, v)
		}
	}
	return dirs, nil
}

// basisGram is the basis rows' Σyyᵀ (D×D, row-major), y their unit x̂
// centred on their own mean and renormalised as the training rows are,
// and their count: what a Subspace spec takes its directions from and a
// Prior spec mixes in. No release: the basis is public.
func basisGram(ctx context.Context, src PublicSource) ([]float64, int64, error) {
	basis := visitPublic(src)
	bsum, bn, err := basisMean(ctx, basis, src.Dim())
	if err != nil {
		return nil, 0, err
	}
	gram, err := transformSecond(ctx, basis, bsum, nil, true)
	return gram, bn, err
}

// basisMean is the mean of the basis rows' unit x̂ and their count, at
// least 2.
func basisMean(ctx context.Context, basis visitRows, D int) ([]float64, int64, error) {
	sum, n, err := transformMean(ctx, basis, D)
	if err != nil {
		return nil, 0, err
	}
	if n < 2 {
		return nil, 0, fmt.Errorf("the basis features have %d rows; a transform needs at least 2", n)
	}
	for j := range sum {
		sum[j] /= float64(n)
	}
	return sum, n, nil
}

// SubspaceProjection is Vᵀ (R×D, row-major), the map from rows to their
// coordinates in the subspace of v's columns (D×R).
func SubspaceProjection(v *mat.Dense) []float64 {
	return mat.DenseCopyOf(v.T()).RawMatrix().Data
}

// transformReleases returns the private releases — the mean's, and the
// second stage's unless centring only — with their noise std, from the
// transform's share of the budget.
func transformReleases(o *Options, spec TransformSpec, matrix bool) ([]float64, []accounting.Mechanism, error) {
	zStar, err := o.rel.WholeTarget()
	if err != nil {
		return nil, nil, err
	}
	shares, names := spec.releaseShares(matrix)
	stds := make([]float64, len(shares))
	var mechs []accounting.Mechanism
	for i, sh := range shares {
		stds[i] = zStar / math.Sqrt(sh)
		mechs = append(mechs, accounting.Mechanism{Name: names[i], Kind: accounting.KindGaussian, Sensitivity: 1, NoiseStd: stds[i], Count: 1})
	}
	return stds, mechs, nil
}

// chargeTransform adds the transform's releases to the fit's priors,
// which charges the whole fit before their noise is drawn
// (accounting.Release.Prior).
func chargeTransform(o *Options, mechs []accounting.Mechanism) error {
	if len(mechs) == 0 { // nothing released (a public transform's gate): nothing to charge
		return nil
	}
	return o.rel.Prior(mechs...)
}

// standardize sets t's per-coordinate scale 1/√(v + τ) from the centred
// rows' (noisy) sums of squares, v their mean; τ is twice the noise of a
// v (0 when exact) plus 10⁻³ of the mean v, so that a coordinate that
// never varies is not blown up.
func standardize(t *preprocessing.Transform, sq []float64, n, std float64) {
	D := len(sq)
	v := make([]float64, D)
	var mean float64
	for j := range v {
		v[j] = math.Max(sq[j]/n, 0)
		mean += v[j] / float64(D)
	}
	tau := 2*std/n + 1e-3*mean + 1e-12
	t.Kind, t.Scale = TransformStandardize, make([]float64, D)
	for j := range v {
		t.Scale[j] = 1 / math.Sqrt(v[j]+tau)
	}
}

// principal sets t's projection onto the top eigenvectors of the centred
// rows' second-moment matrix gram/n (noisy with std per entry std): the
// eigenvalues above ν = 2√D·std/n, the noise's expected spectral norm
// (all but the numerically zero ones when exact), at most spec.Dims;
// whiten scales direction i by 1/√(λᵢ + ν), or with RidgeSample by
// 1/√(λᵢ + 4/√(train·D)), train the training rows' count (n itself
// when gram is theirs). None above the noise leaves centring alone.
func principal(t *preprocessing.Transform, spec TransformSpec, gram []float64, n, train, std float64) error {
	D := t.In
	for i := range gram {
		gram[i] /= n
	}
	vals, vecs, err := symEig(gram, D) // ascending; eigenvector i is vecs[i·D:(i+1)·D]
	if err != nil {
		return fmt.Errorf("transform: the second-moment matrix: %w", err)
	}
	top := math.Max(vals[D-1], 0)
	nu := 2*math.Sqrt(float64(D))*std/n + 1e-6*top
	k := 0
	for i := D - 1; i >= 0 && vals[i] > nu; i-- {
		k++
	}
	if spec.Kind == TransformWhiten {
		k = D
		if spec.Ridge == RidgeSample {
			nu = 4/math.Sqrt(train*float64(D)) + 1e-6*top
		}
	}
	if spec.Dims > 0 {
		k = min(k, spec.Dims)
	}
	if k == 0 {
		return nil
	}
	t.Kind, t.Dims = spec.Kind, k
	t.Projection = make([]float64, k*D)
	for r := 0; r < k; r++ {
		col := D - 1 - r
		s := 1.0
		if spec.Kind == TransformWhiten {
			s = 1 / math.Sqrt(math.Max(vals[col], 0)+nu)
		}
		for j, v := range vecs[col*D : (col+1)*D] {
			t.Projection[r*D+j] = s * v
		}
	}
	return nil
}

// transformRows streams rows through a transform, renormalised.
type transformRows struct {
	rows Rows
	t    *preprocessing.Transform
}

// TransformRows is rows through t: what a method learned after t reads.
func TransformRows(rows Rows, t *preprocessing.Transform) Rows { return transformRows{rows, t} }

func (r transformRows) Dim() int           { return r.t.OutDim(r.rows.Dim()) }
func (r transformRows) Len() int64         { return r.rows.Len() }
func (r transformRows) Groups() []int32    { return r.rows.Groups() }
func (r transformRows) Weights() []float64 { return r.rows.Weights() }
func (r transformRows) Each(fn func(x []float32, y []int32) error) error {
	var out []float32
	return r.rows.Each(func(x []float32, y []int32) error {
		out = transformBlock(r.t, x, len(y), r.rows.Dim(), out)
		return fn(out, y)
	})
}

// transformBlock writes the n rows of block (d0 values each) through t,
// renormalised, into out, grown as needed, and returns it.
func transformBlock[T float32 | float64](t *preprocessing.Transform, block []T, n, d0 int, out []T) []T {
	return transformBlockOf(t, block, n, d0, out, false)
}

// transformBlockOf is transformBlock, with the projection a matrix product
// when fast (Transform.ApplyRowsFast: the last bits may differ from
// transformRow's): for public rows, which no classifier scores again.
func transformBlockOf[T float32 | float64](t *preprocessing.Transform, block []T, n, d0 int, out []T, fast bool) []T {
	d := t.OutDim(d0)
	if cap(out) < n*d {
		out = make([]T, n*d)
	}
	out = out[:n*d]
	// Chunks of rows, each through Preprocessing.ApplyRows (the rows
	// transformRow gives, bit for bit) or, fast, one matrix product and
	// the renormalisation, spread over the cores.
	// A chunk's scratch (its rows in, projected, renormalised) is reused
	// from chunk to chunk rather than allocated for each: at D = 2048 that
	// was 3 MB a chunk, 100 MB of garbage a block of public rows, and the
	// heap grew with it.
	const chunk = 64
	scratch := sync.Pool{New: func() any { s := make([]float64, chunk*(d0+2*d)); return &s }}
	parallelRows((n+chunk-1)/chunk, chunk*d0, func(c int) {
		lo, hi := c*chunk, min((c+1)*chunk, n)
		buf := scratch.Get().(*[]float64)
		defer scratch.Put(buf)
		in, res, mid := (*buf)[:(hi-lo)*d0], (*buf)[chunk*d0:chunk*d0+(hi-lo)*d], (*buf)[chunk*(d0+d):chunk*(d0+d)+(hi-lo)*d]
		for k, v := range block[lo*d0 : hi*d0] {
			in[k] = float64(v)
		}
		if fast {
			t.ApplyRowsFast(in, hi-lo, d0, mid)
			Preprocessing{Normalize: true}.ApplyRows(mid, hi-lo, d, res)
		} else {
			Preprocessing{Transform: t, Normalize: true}.ApplyRows(in, hi-lo, d0, res)
		}
		for k, v := range res {
			out[lo*d+k] = T(v)
		}
	})
	return out
}

// transformRow applies t to one row and renormalises it: the rows a
// method sees after a transform.
func transformRow(t *preprocessing.Transform, row []float64) []float64 {
	return Preprocessing{Transform: t, Normalize: true}.Apply(row)
}

// transformData returns d's rows through t, renormalised.
func transformData(d *Data, t *preprocessing.Transform) *Data {
	k := t.OutDim(d.D)
	return &Data{X: transformBlock(t, d.X, d.N, d.D, bigmem.Float64s(d.N*k)), Y: d.Y, N: d.N, D: k, M: d.M, Groups: d.Groups, W: d.W}
}

// transformSource streams public rows through a transform, renormalised.
type transformSource struct {
	src PublicSource
	t   *preprocessing.Transform
}

func (s transformSource) Dim() int  { return s.t.OutDim(s.src.Dim()) }
func (s transformSource) Rows() int { return s.src.Rows() }
func (s transformSource) Each(fn func(block []float64, rows int) error) error {
	var out []float64
	return s.src.Each(func(block []float64, n int) error {
		out = transformBlockOf(s.t, block, n, s.src.Dim(), out, true)
		return fn(out, n)
	})
}

// recordTransform notes the transform in a result: its preprocessing, its
// hyperparameters, and, for a public one, the guarantee's public list.
func recordTransform(res *Result, t *preprocessing.Transform, spec TransformSpec, private bool) {
	if t == nil {
		return
	}
	res.Prep.Transform = t
	if res.Hyperparameters == nil {
		res.Hyperparameters = map[string]any{}
	}
	res.Hyperparameters["transform"] = t.Kind
	res.Hyperparameters["transform_dims"] = t.OutDim(t.In)
	if t.Kind == TransformWhiten {
		res.Hyperparameters["transform_ridge"] = cmp.Or(spec.Ridge, RidgeNoise)
	}
	if spec.clusters() {
		res.Hyperparameters["transform_clusters"] = spec.Clusters
	}
	if spec.Distill && spec.Public != nil {
		res.Hyperparameters["distill"] = true
	}
	if t.Source == "public" {
		res.Hyperparameters["transform_source"] = "public"
		if private {
			name := spec.PublicName
			if name == "" {
				name = "the public rows"
			}
			res.Guarantee.Assume(accounting.Assumption{Kind: accounting.AssumeTransform, Subject: t.Kind, Detail: name})
		}
	} else if private {
		res.Hyperparameters["transform_share"] = spec.share()
		if spec.basis() || spec.prior() {
			name := spec.BasisName
			if name == "" {
				name = "the basis rows"
			}
			res.Hyperparameters["transform_basis"] = name
			subject := t.Kind + " directions"
			switch {
			case spec.subspace():
				res.Hyperparameters["transform_subspace"] = true
				subject = t.Kind + " subspace"
			case spec.prior():
				res.Hyperparameters["transform_basis_prior"] = true
				subject = t.Kind + " prior (second-moment matrix)"
			}
			res.Guarantee.Assume(accounting.Assumption{Kind: accounting.AssumeTransform, Subject: subject, Detail: name})
		}
	}
}
