package encode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/augment"
	"github.com/dpfeat/dpfeat/features"
)

func viewOpts() ExtractOptions {
	o := extractOpts()
	o.Meta.Views = &features.Views{Views: 3, Augment: "crop=2,flip", MixSelf: 2, MixAlpha: 0.5, Seed: 9, MixDiff: 2, MixWith: "public"}
	o.Augment, _ = augment.Parse("crop=2,flip")
	o.Public, o.PublicLabels = publicImages()
	return o
}

// publicImages are four images of another size, labelled 2, 0, 1, 2.
func publicImages() ([]features.Pixels, []int32) {
	var px []features.Pixels
	for i := range 4 {
		p := features.Pixels{Width: 4, Height: 4, Channels: 1, Data: make([]uint8, 16)}
		for k := range p.Data {
			p.Data[k] = uint8(200 - 11*i - k)
		}
		px = append(px, p)
	}
	return px, []int32{2, 0, 1, 2}
}

// A multi-view extraction writes views + self-mixups + mixups with public
// images rows per image, each naming its image, equal to preprocessing the
// augment package's views directly, the public mixups with their soft
// labels' other class and λ; it is reproducible and resumes to the same
// bytes (#22).
func TestExtractViews(t *testing.T) {
	dir := t.TempDir()
	prep := testPrep(t)
	out := filepath.Join(dir, "mv.arrow")
	res, err := Extract(context.Background(), &memDataset{n: 11}, &sumEncoder{}, prep, out, viewOpts())
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 11*7 || res.Examples != 11 {
		t.Fatalf("%d rows from %d examples, want 77 from 11", res.Rows, res.Examples)
	}
	m, err := features.ReadAll(out, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta.Views == nil || m.Meta.Views.Views != 3 || m.Meta.Views.MixSelf != 2 || m.Meta.Views.MixDiff != 2 {
		t.Fatalf("views metadata %+v", m.Meta.Views)
	}
	// Rows of example i, in order: its 3 views, its 2 self-mixes, its 2
	// mixes with public images.
	ds := &memDataset{n: 11}
	spec := viewOpts().Augment
	pub, pubLabels := publicImages()
	f, err := features.Open(out, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mixLabels []int32
	var mixLambdas []float32
	f.Each(func(b features.Batch) error {
		mixLabels, mixLambdas = append(mixLabels, b.MixLabels...), append(mixLambdas, b.MixLambdas...)
		return nil
	})
	for i := 0; i < 11; i++ {
		ex, _ := ds.Next()
		views := spec.Views(*ex.Pixels, 3, 9, ex.ID)
		mixes, _ := augment.SelfMixes(views, 2, 0.5, 9, ex.ID)
		diffs, partners, lambdas := augment.DiffMixes(views, pub, 2, 0.5, 9, ex.ID)
		for k, img := range append(append(views, mixes...), diffs...) {
			r := i*7 + k
			want, wantMix, wantLambda := fmt.Sprintf("%s#v%d", ex.ID, k), features.Unlabeled, float32(0)
			switch {
			case k >= 5:
				want, wantMix, wantLambda = fmt.Sprintf("%s#d%d", ex.ID, k-5), pubLabels[partners[k-5]], float32(lambdas[k-5])
			case k >= 3:
				want = fmt.Sprintf("%s#m%d", ex.ID, k-3)
			}
			if m.Examples[r] != ex.ID || m.IDs[r] != want || m.Labels[r] != ex.Label || mixLabels[r] != wantMix || mixLambdas[r] != wantLambda {
				t.Fatalf("row %d: example %q id %q label %d mix %d λ %v; want %q %q %d %d %v", r, m.Examples[r], m.IDs[r], m.Labels[r], mixLabels[r], mixLambdas[r], ex.ID, want, ex.Label, wantMix, wantLambda)
			}
			x := make([]float32, prep.Size())
			if err := prep.Apply(img, x); err != nil {
				t.Fatal(err)
			}
			y := make([]float32, 3)
			(&sumEncoder{}).Run(x, 1, y)
			if !slices.Equal(m.Row(r), y) {
				t.Fatalf("row %d: features %v, want those of the augment package's view %v", r, m.Row(r), y)
			}
		}
	}
	// Interrupted and resumed: the same bytes.
	again := filepath.Join(dir, "again.arrow")
	// The sixth encoder call fails: the channel to the writer holds two
	// batches, so by then the writer has taken at least three (15 rows,
	// past RecordRows = 8) and made them durable.
	enc := &sumEncoder{failAt: 6}
	if _, err := Extract(context.Background(), &memDataset{n: 11}, enc, prep, again, viewOpts()); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("interrupted run: %v", err)
	}
	o := viewOpts()
	o.Resume = true
	if res, err := Extract(context.Background(), &memDataset{n: 11}, &sumEncoder{}, prep, again, o); err != nil || res.Resumed == 0 {
		t.Fatalf("resume: %v (resumed %d rows)", err, res.Resumed)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Error("the resumed multi-view file differs from the uninterrupted one")
	}
	// Mixups need two views and α > 0; public mixups need public images.
	o = viewOpts()
	o.Meta.Views.Views = 1
	if _, err := Extract(context.Background(), &memDataset{n: 2}, &sumEncoder{}, prep, filepath.Join(dir, "bad.arrow"), o); err == nil {
		t.Error("self-mixups of a single view were accepted")
	}
	o = viewOpts()
	o.Public = nil
	if _, err := Extract(context.Background(), &memDataset{n: 2}, &sumEncoder{}, prep, filepath.Join(dir, "bad.arrow"), o); err == nil {
		t.Error("mixups with public images were accepted without public images")
	}
}
