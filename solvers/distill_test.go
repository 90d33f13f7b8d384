package solvers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
)

// TestDistillHead: DP-SGD (a linear teacher; the prototypes' path is
// prototypes') within a public whitening's cluster span, distilled. The
// head is linear over the whole whitening (all D directions, not the
// span's), agrees with the teacher on the public rows it was fitted to,
// classifies the training rows about as well, and costs nothing: the
// guarantee's ε and mechanisms are the undistilled fit's, with the
// public rows' use listed.
func TestDistillHead(t *testing.T) {
	d, pub := trainAndPublic(shiftedBy(2400, 16, 4, 5, 0.3))
	fit := func(distill bool) *Result {
		o := Options{
			Privacy:   accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(2)},
			Transform: TransformSpec{Kind: TransformWhiten, Ridge: RidgeSample, Public: pub, PublicName: "pub.arrow", Clusters: 6, Distill: distill},
		}
		res, err := Fit(context.Background(), "dpsgd", d, o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	teacher, head := fit(false), fit(true)
	if head.Prototypes != nil || len(head.W) != d.M*16 || len(head.B) != d.M {
		t.Fatalf("head: %d prototype values, %d weights, %d biases; want none, %d, %d", len(head.Prototypes), len(head.W), len(head.B), d.M*16, d.M)
	}
	if head.Prep.Transform.Dims != 16 || head.Hyperparameters["transform_clusters"] != 6 || head.Hyperparameters["distill"] != true {
		t.Errorf("head's transform keeps %d directions, hyperparameters %v; want all 16, clusters 6, distill", head.Prep.Transform.Dims, head.Hyperparameters)
	}
	if teacher.Guarantee.Epsilon != head.Guarantee.Epsilon || len(teacher.Guarantee.Mechanisms) != len(head.Guarantee.Mechanisms) {
		t.Errorf("guarantee distilled ε = %v (%d mechanisms), not %v (%d)", head.Guarantee.Epsilon, len(head.Guarantee.Mechanisms), teacher.Guarantee.Epsilon, len(teacher.Guarantee.Mechanisms))
	}
	if !slices.ContainsFunc(head.Guarantee.Assumptions(), func(a accounting.Assumption) bool {
		return a.Kind == accounting.AssumePublicFeatures && slices.ContainsFunc(a.Uses, func(u string) bool {
			return u == "a least-squares head is fitted on them, each labelled by the private classifier"
		})
	}) {
		t.Errorf("the guarantee does not list the head's use of the public rows: %+v", head.Guarantee.Assumptions())
	}
	predict := func(r *Result, x []float64) int { return teacherLabel(r, r.Prep.Apply(slices.Clone(x)), d.M) }
	agree := 0
	for i := range pub.N {
		if predict(teacher, pub.Row(i)) == predict(head, pub.Row(i)) {
			agree++
		}
	}
	if float64(agree) < 0.95*float64(pub.N) {
		t.Errorf("the head agrees with its teacher on %d of %d public rows, want ≥ 95%%", agree, pub.N)
	}
	right := func(r *Result) float64 {
		ok := 0
		for i := range d.N {
			if predict(r, d.Row(i)) == int(d.Y[i]) {
				ok++
			}
		}
		return float64(ok) / float64(d.N)
	}
	if a, b := right(teacher), right(head); b < a-0.02 {
		t.Errorf("training accuracy: head %.3f, teacher %.3f", b, a)
	}
}

// TestTeacherLabelRanksClassesAsModels: with several prototypes per class
// the teacher's label is the class nearest on average (protodist's
// ClassScore, what a classifier file predicts), not the class holding the
// single nearest prototype; a linear teacher's is its largest score, ties
// to the lower class.
func TestTeacherLabelRanksClassesAsModels(t *testing.T) {
	protos := &Result{Prototypes: []float64{0.1, 10, 1, 1}, PerClass: 2, Distance: "euclidean"}
	if got := teacherLabel(protos, []float64{0}, 2); got != 1 {
		t.Errorf("prototypes: label %d, want 1 (mean distance 1 against 5.05)", got)
	}
	linear := &Result{W: []float64{1, 0, 1, 0, 0, 1}, B: []float64{0, 0, 0.5}}
	for _, c := range []struct {
		x    []float64
		want int
	}{{[]float64{1, 0}, 0}, {[]float64{0, 1}, 2}, {[]float64{0, 0}, 2}} {
		if got := teacherLabel(linear, c.x, 3); got != c.want {
			t.Errorf("linear, x = %v: label %d, want %d", c.x, got, c.want)
		}
	}
}

// TestPublicPassesReportProgress: the passes over public rows — the
// whitening's, the cluster span's (its rows and its Lloyd steps) and the
// distilled head's — report progress (at D = 2048 they are most of a
// fit's time), and a line names only public counts: the public file's
// rows read so far, the step.
func TestPublicPassesReportProgress(t *testing.T) {
	d, pub := trainAndPublic(shiftedBy(2400, 16, 4, 5, 0.3))
	var lines []string
	o := Options{
		Privacy:   accounting.ReleaseOptions{Epsilon: 1, Delta: 1e-5, Noise: accounting.SeededNoise(2)},
		Transform: TransformSpec{Kind: TransformWhiten, Ridge: RidgeSample, Public: pub, PublicName: "pub.arrow", Clusters: 6, Distill: true},
		Progress:  func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) },
	}
	if _, err := Fit(context.Background(), "dpsgd", d, o); err != nil {
		t.Fatal(err)
	}
	total := fmt.Sprintf("%d/%d public rows", pub.N, pub.N)
	for _, want := range []string{
		"transform: the public rows' statistics: " + total,
		"transform: the span's rows: " + total,
		"transform: clustering the public rows, step 1/",
		"distill: the head: " + total,
	} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("no progress line %q in %q", want, lines)
		}
	}
}
