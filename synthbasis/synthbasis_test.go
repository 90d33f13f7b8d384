package synthbasis

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

// meanEncoder's features are the means of its input's four quarters.
type meanEncoder struct{ per int }

func (meanEncoder) Dim() int { return 4 }

func (e meanEncoder) Run(x []float32, n int, out []float32) error {
	for i := 0; i < n; i++ {
		img := x[i*e.per : (i+1)*e.per]
		for j := range 4 {
			var s float32
			q := img[j*e.per/4 : (j+1)*e.per/4]
			for _, v := range q {
				s += v
			}
			out[i*4+j] = s / float32(len(q))
		}
	}
	return nil
}

var input = models.Input{Layout: "NCHW", Channels: 1, Height: 8, Width: 8, Scale: 1.0 / 255, Mean: []float64{0}, Std: []float64{1}}

func request(dir, sha string, s Settings) Request {
	return Request{Dir: dir, Settings: s, Input: input, Encoder: meanEncoder{per: 64}, Preprocessor: encode.NewPreprocessor(input),
		EncoderSHA256: sha, EncoderName: "mean", Version: "test", Batch: 16}
}

// TestEnsureMakesOnceAndReuses: the first call makes the file (features of
// Count images, labelled by process, its source saying what they are), the
// next finds it; other settings or another encoder get another file; a
// file at the path that is not this basis is named, never replaced.
func TestEnsureMakesOnceAndReuses(t *testing.T) {
	dir := t.TempDir()
	sha := strings.Repeat("ab", 32)
	var making []string
	r := request(dir, sha, Settings{Count: 40})
	r.Making = func(p string) { making = append(making, p) }
	var bar bytes.Buffer
	r.Progress = &bar
	path, made, err := Ensure(context.Background(), r)
	if err != nil || !made {
		t.Fatalf("first: %v made %v", err, made)
	}
	if !strings.HasPrefix(bar.String(), "synthetic basis [") {
		t.Errorf("progress %q: want it named", bar.String())
	}
	f, err := features.Open(path, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	md := f.Metadata()
	if f.Rows() != 40 || f.Dim() != 4 || md.EncoderSHA256 != sha || !strings.HasPrefix(md.Source, features.SyntheticBasisSource) || strings.Join(md.Classes, ",") != "deadleaves,spectrum" {
		t.Errorf("%d rows × %d, encoder %q, source %q, classes %v", f.Rows(), f.Dim(), md.EncoderSHA256, md.Source, md.Classes)
	}
	f.Close()
	before, _ := os.ReadFile(path)
	again, made, err := Ensure(context.Background(), r)
	if err != nil || made || again != path || len(making) != 1 {
		t.Errorf("second: %q made %v, %v (making called %d times)", again, made, err, len(making))
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the second call rewrote the file")
	}
	for _, other := range []string{Path(dir, sha, input, Settings{Count: 40, Seed: 1}), Path(dir, sha, input, Settings{Count: 41}), Path(dir, strings.Repeat("cd", 32), input, Settings{Count: 40})} {
		if other == path {
			t.Errorf("other settings or encoder share %s", path)
		}
	}
	// Another encoder's basis planted at this one's path.
	foreign := request(dir, strings.Repeat("ef", 32), Settings{Count: 40})
	fp := Path(dir, foreign.EncoderSHA256, input, foreign.Settings)
	if err := os.Rename(path, fp); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Ensure(context.Background(), foreign); err == nil || !strings.Contains(err.Error(), "not a synthetic basis of this encoder") {
		t.Errorf("a foreign file: %v", err)
	}
	if after, _ := os.ReadFile(fp); !bytes.Equal(before, after) {
		t.Error("a foreign file was replaced")
	}
}

// TestImagesAreTheSettingsAlone: two datasets of the same settings give
// the same images, ids and labels, whatever was read before.
func TestImagesAreTheSettingsAlone(t *testing.T) {
	o := Settings{Count: 6}.Images(input)
	a, b := NewDataset(o, "a"), NewDataset(o, "b")
	b.Next() // b is one image ahead: the images do not depend on the order read
	a.Next()
	for i := 1; i < 6; i++ {
		x, err1 := a.Next()
		y, err2 := b.Next()
		if err1 != nil || err2 != nil || x.ID != y.ID || x.Label != y.Label || !bytes.Equal(x.Pixels.Data, y.Pixels.Data) {
			t.Fatalf("image %d differs: %v %v", i, err1, err2)
		}
		want := o.Image(int64(i))
		if !bytes.Equal(x.Pixels.Data, want.Data) || x.Pixels.Width != 8 || x.Pixels.Channels != 1 {
			t.Fatalf("image %d is not randproc's", i)
		}
	}
	if _, err := a.Next(); err == nil {
		t.Error("no end after Count images")
	}
}

// cancelling is meanEncoder that cancels its context on its second batch.
type cancelling struct {
	meanEncoder
	cancel context.CancelFunc
	calls  *int
}

func (e cancelling) Run(x []float32, n int, out []float32) error {
	if *e.calls++; *e.calls == 2 {
		e.cancel()
	}
	return e.meanEncoder.Run(x, n, out)
}

// TestEnsureInterrupted: an interrupted making is encode.ErrInterrupted
// and leaves no file at the path; the next call makes it whole.
func TestEnsureInterrupted(t *testing.T) {
	dir := t.TempDir()
	sha := strings.Repeat("ab", 32)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	r := request(dir, sha, Settings{Count: 200})
	r.Encoder, r.Batch = cancelling{meanEncoder{per: 64}, cancel, &calls}, 8
	path := Path(dir, sha, input, r.Settings)
	if _, _, err := Ensure(ctx, r); !errors.Is(err, encode.ErrInterrupted) {
		t.Fatalf("interrupted: %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("an interrupted making left the file")
	}
	r.Encoder = meanEncoder{per: 64}
	if got, made, err := Ensure(context.Background(), r); err != nil || !made || got != path {
		t.Fatalf("after the interruption: %q %v %v", got, made, err)
	}
	if rows, err := features.SyntheticBasisRows(path, sha); err != nil || rows != 200 {
		t.Errorf("%d rows, %v", rows, err)
	}
}
