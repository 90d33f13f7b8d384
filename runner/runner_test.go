package runner

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/orttest"
	"github.com/dpfeat/dpfeat/internal/synth"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/train"
)

// images writes n small PNGs in two class folders.
func images(t *testing.T, root string, n int) {
	for i := 0; i < n; i++ {
		dir := filepath.Join(root, []string{"cat", "dog"}[i%2])
		os.MkdirAll(dir, 0o755)
		img := image.NewNRGBA(image.Rect(0, 0, 16+i%5, 14))
		for y := 0; y < 14; y++ {
			for x := 0; x < 16+i%5; x++ {
				img.SetNRGBA(x, y, color.NRGBA{uint8(9 * i), uint8(x * 13), uint8(y*7 + i), 255})
			}
		}
		var b bytes.Buffer
		png.Encode(&b, img)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d.png", i)), b.Bytes(), 0o644)
	}
}

// TestExtractOnPrism (#24 acceptance): extraction through Prism — shards
// of whole encoder batches, extracted by two worker slots — equals the
// single-machine extraction row for row, bit for bit, read through the
// manifest; a rerun without --resume is refused, with it nothing is redone.
func TestExtractOnPrism(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "images")
	images(t, data, 23)
	model := filepath.Join("..", "testdata", "encoders", "tiny-cnn.onnx")
	man, _, err := models.ManifestFor(model)
	if err != nil {
		t.Fatal(err)
	}
	meta := features.Metadata{Classes: []string{"cat", "dog"}, EncoderSHA256: "e", Source: "test", Created: "2026-01-01T00:00:00Z"}
	opt := encode.ExtractOptions{Batch: 4, Workers: 2, Meta: meta, Identity: map[string]string{"test": "1"}}
	ds, err := features.OpenDataset(data, features.DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := encode.OpenSession(model, man, encode.SessionOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	single := filepath.Join(dir, "single.arrow")
	if _, err := encode.Extract(context.Background(), ds, sess, encode.NewPreprocessor(man.Input), single, opt); err != nil {
		t.Fatal(err)
	}
	ds.Close()
	sess.Close()
	job := ExtractJob{Model: model, Manifest: *man, Threads: 1, Device: "cpu", Data: data, ShardRows: 6, Extract: opt,
		Out: filepath.Join(dir, "sharded.json"), Workers: 2}
	res, err := Extract(context.Background(), job, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// ShardRows 6 rounds up to whole batches of 4: shards of 8, 8 and 7.
	if res.Shards != 3 || res.Made != 3 || res.Rows != 23 || res.Runner != "prism" {
		t.Fatalf("result %+v", res)
	}
	a, err := features.ReadAll(single, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := features.ReadAll(job.Out, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Data, b.Data) || !slices.Equal(a.Labels, b.Labels) || !slices.Equal(a.IDs, b.IDs) {
		t.Error("the sharded extraction differs from the single-machine one")
	}
	if _, err := Extract(context.Background(), job, Options{}); err == nil {
		t.Error("a rerun over existing shards was not refused")
	}
	job.Extract.Resume = true
	if again, err := Extract(context.Background(), job, Options{}); err != nil || again.Made != 0 {
		t.Errorf("resume of a finished run: %+v, %v", again, err)
	}
}

// TestStatsOnPrism (#24 acceptance): the sufficient statistics of a
// sharded dataset, each shard accumulated by a worker and the sums
// combined, equal those of the concatenated file within 1e-9 (relative),
// with Gram, class Grams, sums, squares and counts.
func TestStatsOnPrism(t *testing.T) {
	dir := t.TempDir()
	meta := features.Metadata{Classes: []string{"a", "b", "c"}, EncoderSHA256: "e"}
	all := synth.Clusters(900, 6, 3, 0.7, 4, nil)
	whole := filepath.Join(dir, "whole.arrow")
	if err := features.WriteFile(whole, meta, features.WriterOptions{}, all); err != nil {
		t.Fatal(err)
	}
	m := &features.ShardManifest{Dim: 6, EncoderSHA256: "e"}
	for s, lo := 0, 0; lo < 900; s, lo = s+1, lo+250 {
		hi := min(lo+250, 900)
		name := fmt.Sprintf("part-%d.arrow", s)
		if err := features.WriteFile(filepath.Join(dir, name), meta, features.WriterOptions{},
			features.Batch{Dim: 6, Features: all.Features[lo*6 : hi*6], Labels: all.Labels[lo:hi]}); err != nil {
			t.Fatal(err)
		}
		m.Shards = append(m.Shards, features.Shard{Path: name, Rows: int64(hi - lo)})
		m.Rows += int64(hi - lo)
	}
	manifest := filepath.Join(dir, "all.json")
	if err := features.WriteShardManifest(manifest, m); err != nil {
		t.Fatal(err)
	}
	opt := solvers.StatsOptions{Normalize: true, Clip: 0.8, Gram: true, ClassGram: []int{0, 2}, SumSquares: true}
	rf, err := NewFit(manifest, features.ImportOptions{}, dir, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rf.Accumulate(context.Background(), 3, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := features.Open(whole, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, err := solvers.Accumulate(context.Background(), train.FileRows(f), 3, opt)
	if err != nil {
		t.Fatal(err)
	}
	close := func(name string, a, b []float64) {
		if len(a) != len(b) || len(a) == 0 {
			t.Fatalf("%s: %d and %d values", name, len(a), len(b))
		}
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-9*math.Max(1, math.Abs(b[i])) {
				t.Fatalf("%s[%d] = %v, single machine %v", name, i, a[i], b[i])
			}
		}
	}
	close("G", got.Gram, want.Gram)
	close("sums", got.Sums, want.Sums)
	close("squares", got.SumSquares, want.SumSquares)
	close("class 2's Gram", got.ClassGram[2], want.ClassGram[2])
	if !slices.Equal(got.Counts, want.Counts) {
		t.Errorf("counts %v, single machine %v", got.Counts, want.Counts)
	}
}

// TestMultiViewOnPrism (#24): a multi-view dataset whose examples each lie
// in one shard (their rows interleaved there) is fitted through the
// runner: a Poisson-sampled gradient pass, each shard grouping its own
// examples and numbering them from its first example's index, equals the
// pass over the concatenated file grouped as one machine groups it; a
// dataset with an example spanning two shards is refused, naming the row.
func TestMultiViewOnPrism(t *testing.T) {
	dir := t.TempDir()
	meta := features.Metadata{Classes: []string{"a", "b", "c"}, EncoderSHA256: "e", Views: &features.Views{Views: 2, Augment: "flip"}}
	const n, dim = 300, 5
	base := synth.Clusters(n, dim, 3, 0.7, 6, nil)
	// Two views of each example (its features, one coordinate moved by
	// 0.3), the views of a shard's examples interleaved: e0 e1 … e0 e1 ….
	shard := func(lo, hi int) features.Batch {
		b := features.Batch{Dim: dim}
		for v := 0; v < 2; v++ {
			for e := lo; e < hi; e++ {
				row := slices.Clone(base.Features[e*dim : (e+1)*dim])
				row[v] += 0.3
				b.Features, b.Labels = append(b.Features, row...), append(b.Labels, base.Labels[e])
				b.Examples = append(b.Examples, fmt.Sprintf("ex-%d", e))
			}
		}
		return b
	}
	write := func(name string, cuts []int) string {
		m := &features.ShardManifest{Dim: dim, EncoderSHA256: "e"}
		for s := 0; s+1 < len(cuts); s++ {
			b := shard(cuts[s], cuts[s+1])
			if cuts[s] == 100 && name == "spanning" {
				b.Examples[0] = "ex-99" // a row of an example of the shard before
			}
			file := fmt.Sprintf("%s-%d.arrow", name, s)
			if err := features.WriteFile(filepath.Join(dir, file), meta, features.WriterOptions{}, b); err != nil {
				t.Fatal(err)
			}
			m.Shards = append(m.Shards, features.Shard{Path: file, Rows: int64(len(b.Labels))})
			m.Rows += int64(len(b.Labels))
		}
		path := filepath.Join(dir, name+".json")
		if err := features.WriteShardManifest(path, m); err != nil {
			t.Fatal(err)
		}
		return path
	}
	manifest := write("views", []int{0, 100, 220, 300})
	rf, err := NewFit(manifest, features.ImportOptions{}, dir, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, 3*(dim+1))
	for i := range theta {
		theta[i] = float64(i%4) - 1.5
	}
	p := solvers.Pass{Kind: solvers.PassGradient, M: 3, Clip: 1, Normalize: true, ClipGrad: 0.5, Theta: theta,
		Sample: accounting.NewPoissonSample(accounting.SeededNoise(2), 0.3)}
	got, err := rf.Pass(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := features.Open(manifest, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := train.ExampleRows(f, manifest)
	if err != nil {
		t.Fatal(err)
	}
	want, err := solvers.RunPass(context.Background(), rows, p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("gradient[%d] = %v over the shards, %v on one machine", i, got[i], want[i])
		}
	}
	spanning := write("spanning", []int{0, 100, 300})
	if _, err := NewFit(spanning, features.ImportOptions{}, dir, Options{}); err == nil || !strings.Contains(err.Error(), "shards 1 and 2 hold the same example") {
		t.Errorf("an example spanning shards: %v", err)
	}
}
