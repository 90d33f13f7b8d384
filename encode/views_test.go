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
	o.Meta.Views = &features.Views{Views: 3, Augment: "crop=2,flip", MixSelf: 2, MixAlpha: 0.5, Seed: 9}
	o.Augment, _ = augment.Parse("crop=2,flip")
	return o
}

// A multi-view extraction writes views + self-mixups rows per image, each
// naming its image, equal to preprocessing the augment package's views
// directly; it is reproducible and resumes to the same bytes (#22).
func TestExtractViews(t *testing.T) {
	dir := t.TempDir()
	prep := testPrep(t)
	out := filepath.Join(dir, "mv.arrow")
	res, err := Extract(context.Background(), &memDataset{n: 11}, &sumEncoder{}, prep, out, viewOpts())
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 11*5 || res.Examples != 11 {
		t.Fatalf("%d rows from %d examples, want 55 from 11", res.Rows, res.Examples)
	}
	m, err := features.ReadAll(out, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta.Views == nil || m.Meta.Views.Views != 3 || m.Meta.Views.MixSelf != 2 {
		t.Fatalf("views metadata %+v", m.Meta.Views)
	}
	// Rows of example i, in order: its 3 views, then its 2 mixes.
	ds := &memDataset{n: 11}
	spec := viewOpts().Augment
	for i := 0; i < 11; i++ {
		ex, _ := ds.Next()
		views := spec.Views(*ex.Pixels, 3, 9, ex.ID)
		mixes, _ := augment.SelfMixes(views, 2, 0.5, 9, ex.ID)
		for k, img := range append(views, mixes...) {
			r := i*5 + k
			want := fmt.Sprintf("%s#v%d", ex.ID, k)
			if k >= 3 {
				want = fmt.Sprintf("%s#m%d", ex.ID, k-3)
			}
			if m.Examples[r] != ex.ID || m.IDs[r] != want || m.Labels[r] != ex.Label {
				t.Fatalf("row %d: example %q id %q label %d; want %q %q %d", r, m.Examples[r], m.IDs[r], m.Labels[r], ex.ID, want, ex.Label)
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
	// Mixups need two views and α > 0.
	o = viewOpts()
	o.Meta.Views.Views = 1
	if _, err := Extract(context.Background(), &memDataset{n: 2}, &sumEncoder{}, prep, filepath.Join(dir, "bad.arrow"), o); err == nil {
		t.Error("self-mixups of a single view were accepted")
	}
}
