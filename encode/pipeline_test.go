package encode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/outlock"
	"github.com/dpfeat/dpfeat/models"
)

// memDataset is an in-memory dataset of n grey 6×5 images; image i has
// label i%3, and the images listed in bad carry undecodable bytes.
type memDataset struct {
	n    int
	next int
	bad  map[int]bool
}

func (d *memDataset) Classes() []string { return []string{"a", "b", "c"} }
func (d *memDataset) Len() int64        { return int64(d.n) }
func (d *memDataset) Source() string    { return "memory" }
func (d *memDataset) Close() error      { return nil }
func (d *memDataset) Next() (features.Example, error) {
	if d.next >= d.n {
		return features.Example{}, io.EOF
	}
	i := d.next
	d.next++
	ex := features.Example{Label: int32(i % 3), ID: fmt.Sprintf("img%03d", i), Index: int64(i)}
	if d.bad[i] {
		ex.Encoded = []byte("not an image")
		return ex, nil
	}
	px := &features.Pixels{Width: 6, Height: 5, Channels: 1, Data: make([]uint8, 30)}
	for k := range px.Data {
		px.Data[k] = uint8(i*7 + k*3)
	}
	ex.Pixels = px
	return ex, nil
}

// sumEncoder maps an image to (sum, mean, first value) of its tensor; it
// fails or cancels on the call numbered failAt (from 1) if set.
type sumEncoder struct {
	calls  atomic.Int32
	failAt int32
	cancel context.CancelFunc
}

func (e *sumEncoder) Dim() int { return 3 }
func (e *sumEncoder) Run(x []float32, n int, out []float32) error {
	if c := e.calls.Add(1); c == e.failAt {
		if e.cancel == nil {
			return errors.New("simulated failure")
		}
		// Ctrl-C arrives while this batch is being encoded; the batch
		// itself completes.
		e.cancel()
	}
	size := len(x) / n
	for i := 0; i < n; i++ {
		var s float32
		for _, v := range x[i*size : (i+1)*size] {
			s += v
		}
		out[i*3], out[i*3+1], out[i*3+2] = s, s/float32(size), x[i*size]
	}
	return nil
}

func testPrep(t *testing.T) *Preprocessor {
	return NewPreprocessor(input(t, models.Input{Layout: "NCHW", Channels: 3, Height: 4, Width: 4}))
}

func extractOpts() ExtractOptions {
	// A fixed creation time: runs started in different seconds must still
	// give identical files.
	return ExtractOptions{Batch: 4, Workers: 3, RecordRows: 8, Meta: features.Metadata{Classes: []string{"a", "b", "c"}, Source: "memory", Created: "2026-01-01T00:00:00Z"},
		Identity: map[string]string{"model": "sum"}}
}

func TestExtractWritesEveryImageInOrder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "f.arrow")
	prep := testPrep(t)
	res, err := Extract(context.Background(), &memDataset{n: 37}, &sumEncoder{}, prep, out, extractOpts())
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 37 || res.Examples != 37 || res.Skipped != 0 {
		t.Errorf("result %+v", res)
	}
	m, err := features.ReadAll(out, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Each row equals the encoder applied to that image alone.
	ds := &memDataset{n: 37}
	for i := 0; i < 37; i++ {
		ex, _ := ds.Next()
		x := make([]float32, prep.Size())
		if err := prep.Apply(*ex.Pixels, x); err != nil {
			t.Fatal(err)
		}
		want := make([]float32, 3)
		(&sumEncoder{}).Run(x, 1, want)
		if got := m.Row(i); got[0] != want[0] || got[2] != want[2] || m.Labels[i] != int32(i%3) || m.IDs[i] != ex.ID {
			t.Fatalf("row %d: %v %d %q, want %v %d %q", i, got, m.Labels[i], m.IDs[i], want, i%3, ex.ID)
		}
	}
	partial, state := features.PartialPaths(out)
	for _, p := range []string{partial, state} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind", p)
		}
	}
	// Limit stops early.
	out2 := filepath.Join(t.TempDir(), "g.arrow")
	opt := extractOpts()
	opt.Limit = 10
	if res, err := Extract(context.Background(), &memDataset{n: 37}, &sumEncoder{}, prep, out2, opt); err != nil || res.Rows != 10 {
		t.Errorf("limit 10: %+v %v", res, err)
	}
}

func TestExtractBadImages(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "f.arrow")
	_, err := Extract(context.Background(), &memDataset{n: 20, bad: map[int]bool{13: true}}, &sumEncoder{}, testPrep(t), out, extractOpts())
	if err == nil || !strings.Contains(err.Error(), "img013") || !strings.Contains(err.Error(), "--skip-bad") {
		t.Fatalf("bad image without --skip-bad: %v", err)
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Error("a failed extraction wrote the output")
	}
	os.Remove(out + ".partial")
	os.Remove(out + ".partial.json")
	opt := extractOpts()
	opt.SkipBad = true
	res, err := Extract(context.Background(), &memDataset{n: 20, bad: map[int]bool{13: true, 2: true}}, &sumEncoder{}, testPrep(t), out, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 18 || res.Skipped != 2 || len(res.SkippedIDs) != 2 || res.SkippedIDs[0] != "img002" {
		t.Errorf("with --skip-bad: %+v", res)
	}
}

func TestExtractResumeGivesTheSameFile(t *testing.T) {
	dir := t.TempDir()
	prep := testPrep(t)
	whole := filepath.Join(dir, "whole.arrow")
	if _, err := Extract(context.Background(), &memDataset{n: 45}, &sumEncoder{}, prep, whole, extractOpts()); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"failure", "interrupt"} {
		out := filepath.Join(dir, how+".arrow")
		enc := &sumEncoder{failAt: 6}
		ctx, cancel := context.WithCancel(context.Background())
		if how == "interrupt" {
			enc.cancel = cancel
		}
		_, err := Extract(ctx, &memDataset{n: 45}, enc, prep, out, extractOpts())
		cancel()
		if err == nil || !strings.Contains(err.Error(), "--resume") {
			t.Fatalf("%s: %v", how, err)
		}
		if how == "interrupt" && !errors.Is(err, ErrInterrupted) {
			t.Errorf("interrupt: %v is not ErrInterrupted", err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%s: the output exists after an interrupted run", how)
		}
		// Without --resume the partial file is not silently discarded.
		if _, err := Extract(context.Background(), &memDataset{n: 45}, &sumEncoder{}, prep, out, extractOpts()); err == nil || !strings.Contains(err.Error(), "rerun with --resume") {
			t.Fatalf("%s: rerun without --resume: %v", how, err)
		}
		// A different model cannot resume it.
		opt := extractOpts()
		opt.Resume = true
		opt.Identity = map[string]string{"model": "other"}
		if _, err := Extract(context.Background(), &memDataset{n: 45}, &sumEncoder{}, prep, out, opt); err == nil || !strings.Contains(err.Error(), "differs from the interrupted one in model") {
			t.Fatalf("%s: resume with another model: %v", how, err)
		}
		opt.Identity = extractOpts().Identity
		res, err := Extract(context.Background(), &memDataset{n: 45}, &sumEncoder{}, prep, out, opt)
		if err != nil {
			t.Fatal(err)
		}
		if res.Resumed == 0 || res.Rows != 45 {
			t.Errorf("%s: resumed %d rows, total %d", how, res.Resumed, res.Rows)
		}
		a, _ := os.ReadFile(whole)
		b, _ := os.ReadFile(out)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the resumed file differs from the uninterrupted one", how)
		}
	}
}

// slowEncoder records whether Run is still going after Extract returned.
type slowEncoder struct {
	running  atomic.Int32
	returned atomic.Bool
	late     atomic.Bool
}

func (e *slowEncoder) Dim() int { return 3 }
func (e *slowEncoder) Run(x []float32, n int, out []float32) error {
	e.running.Add(1)
	defer e.running.Add(-1)
	time.Sleep(30 * time.Millisecond)
	if e.returned.Load() {
		e.late.Store(true) // the session would be freed under this call
	}
	return nil
}

// failingDataset fails after a few examples, while batches are encoded.
type failingDataset struct{ memDataset }

func (d *failingDataset) Next() (features.Example, error) {
	if d.next == 9 {
		return features.Example{}, errors.New("example 9: unexpected end of file")
	}
	return d.memDataset.Next()
}

// TestExtractJoinsTheEncoder (#16 item 2): when a dataset error or an
// interruption ends Extract while the encoder is in a Run, Extract waits
// for that Run before it returns (the caller then frees the session).
func TestExtractJoinsTheEncoder(t *testing.T) {
	for _, interrupt := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "f.arrow")
		enc := &slowEncoder{}
		ctx, cancel := context.WithCancel(context.Background())
		var ds features.Dataset = &failingDataset{memDataset{n: 40}}
		if interrupt {
			ds = &memDataset{n: 400}
			time.AfterFunc(40*time.Millisecond, cancel)
		}
		_, err := Extract(ctx, ds, enc, testPrep(t), out, extractOpts())
		enc.returned.Store(true)
		cancel()
		if err == nil {
			t.Fatalf("interrupt %v: no error", interrupt)
		}
		if n := enc.running.Load(); n != 0 {
			t.Errorf("interrupt %v: %d encoder runs still going after Extract returned (%v)", interrupt, n, err)
		}
		time.Sleep(50 * time.Millisecond)
		if enc.late.Load() {
			t.Errorf("interrupt %v: a Run finished after Extract returned", interrupt)
		}
	}
}

// TestOneRunPerOutput (#16 item 3): a second extraction into the same
// output — a --resume started while the first still writes — is refused at
// once; the first finishes with every row, and its file is intact.
func TestOneRunPerOutput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "f.arrow")
	first := make(chan error, 1)
	enc := &slowEncoder{}
	go func() {
		_, err := Extract(context.Background(), &memDataset{n: 40}, enc, testPrep(t), out, extractOpts())
		first <- err
	}()
	for enc.running.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	opt := extractOpts()
	opt.Resume = true
	_, err := Extract(context.Background(), &memDataset{n: 40}, &sumEncoder{}, testPrep(t), out, opt)
	if !errors.Is(err, outlock.ErrBusy) {
		t.Fatalf("a second run on the same output: %v", err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	m, err := features.ReadAll(out, features.ReadOptions{})
	if err != nil || m.Rows != 40 {
		t.Fatalf("the first run's file: %v rows, %v", m, err)
	}
}

// bigDataset yields n decoded images of side×side bytes.
type bigDataset struct {
	memDataset
	side int
}

func (d *bigDataset) Next() (features.Example, error) {
	ex, err := d.memDataset.Next()
	if err == nil {
		ex.Pixels = &features.Pixels{Width: d.side, Height: d.side, Channels: 1, Data: make([]uint8, d.side*d.side)}
		ex.Pixels.Data[0] = uint8(ex.Index)
	}
	return ex, err
}

// TestExtractMemoryIsBounded (#16 item 8): an absurd --encoder-batch is clamped to
// the data, and images waiting to be preprocessed are bounded by
// MaxInflight whatever the batch: with room for three 1 MB images and a
// batch of 64, batches are cut short and every row comes out right.
func TestExtractMemoryIsBounded(t *testing.T) {
	dir := t.TempDir()
	opt := extractOpts()
	opt.Batch = 10_000_000
	if _, err := Extract(context.Background(), &memDataset{n: 37}, &sumEncoder{}, testPrep(t), filepath.Join(dir, "a.arrow"), opt); err != nil {
		t.Fatalf("--encoder-batch 10000000 on 37 images: %v", err)
	}
	want := filepath.Join(dir, "want.arrow")
	opt = extractOpts()
	opt.Batch = 64
	if _, err := Extract(context.Background(), &bigDataset{memDataset{n: 20}, 1024}, &sumEncoder{}, testPrep(t), want, opt); err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(dir, "got.arrow")
	opt.MaxInflight = 3 << 20
	if _, err := Extract(context.Background(), &bigDataset{memDataset{n: 20}, 1024}, &sumEncoder{}, testPrep(t), got, opt); err != nil {
		t.Fatal(err)
	}
	a, _ := features.ReadAll(want, features.ReadOptions{})
	b, err := features.ReadAll(got, features.ReadOptions{})
	if err != nil || a.Rows != 20 || b.Rows != 20 {
		t.Fatalf("rows %d and %d (%v)", a.Rows, b.Rows, err)
	}
	for i := range a.Data {
		if a.Data[i] != b.Data[i] {
			t.Fatalf("value %d differs with the in-flight bound", i)
		}
	}
}

// TestStalePartialIsDiscarded (#16 items 8, 12; #35 items 4, 14): a
// partial left without its state (a run killed before its first record
// batch) holds nothing to resume: a plain run and a --resume both discard
// it and extract, and a link planted at OUT.partial is removed as a link,
// never followed (its target is not created, OUT is a file).
func TestStalePartialIsDiscarded(t *testing.T) {
	dir := t.TempDir()
	for k, resume := range []bool{false, true} {
		out := filepath.Join(dir, fmt.Sprintf("f%d.arrow", k))
		partial, _ := features.PartialPaths(out)
		os.WriteFile(partial, []byte("half a file"), 0o644)
		opt := extractOpts()
		opt.Resume = resume
		if _, err := Extract(context.Background(), &memDataset{n: 10}, &sumEncoder{}, testPrep(t), out, opt); err != nil {
			t.Fatalf("resume %v over a stale partial: %v", resume, err)
		}
		if _, err := os.Stat(partial); err == nil {
			t.Errorf("resume %v: the stale partial is still there", resume)
		}
	}
	out := filepath.Join(dir, "g.arrow")
	partial, _ := features.PartialPaths(out)
	target := filepath.Join(dir, "elsewhere.arrow")
	if err := os.Symlink(target, partial); err != nil {
		t.Skip("no symlinks:", err)
	}
	if _, err := Extract(context.Background(), &memDataset{n: 10}, &sumEncoder{}, testPrep(t), out, extractOpts()); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(out); err != nil || !st.Mode().IsRegular() {
		t.Errorf("OUT is not a plain file after a link was planted at OUT.partial: %v %v", st, err)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("the link's target was created")
	}
}

// TestDamagedPartialOffersRestart (#16 item 12): a partial whose saved
// batches are damaged made --resume advise "rerun with --resume" forever;
// it now says what is damaged and offers --restart, which works.
func TestDamagedPartialOffersRestart(t *testing.T) {
	out := filepath.Join(t.TempDir(), "f.arrow")
	prep := testPrep(t)
	enc := &sumEncoder{failAt: 6}
	if _, err := Extract(context.Background(), &memDataset{n: 45}, enc, prep, out, extractOpts()); err == nil {
		t.Fatal("no failure")
	}
	partial, _ := features.PartialPaths(out)
	raw, _ := os.ReadFile(partial)
	for i := 64; i < len(raw) && i < 400; i++ {
		raw[i] ^= 0xff // damage the saved batches
	}
	os.WriteFile(partial, raw, 0o644)
	opt := extractOpts()
	opt.Resume = true
	for try := 0; try < 2; try++ {
		_, err := Extract(context.Background(), &memDataset{n: 45}, &sumEncoder{}, prep, out, opt)
		if err == nil || !strings.Contains(err.Error(), "--restart") || strings.Contains(err.Error(), "rerun with --resume") {
			t.Fatalf("try %d on a damaged partial: %v", try, err)
		}
	}
	opt = extractOpts()
	opt.Restart = true
	res, err := Extract(context.Background(), &memDataset{n: 45}, &sumEncoder{}, prep, out, opt)
	if err != nil || res.Rows != 45 {
		t.Fatalf("--restart: %v, %d rows", err, res.Rows)
	}
}

// TestExtractHoldsRowsByTime (#38): rows are durable by time as well as
// by record batch, so a slow encoder interrupted before its first record
// batch of 4,096 rows loses seconds, not all of its work; the resumed
// file is byte for byte the uninterrupted one's.
func TestExtractHoldsRowsByTime(t *testing.T) {
	dir := t.TempDir()
	prep := testPrep(t)
	opts := func() ExtractOptions {
		o := extractOpts()
		o.RecordRows, o.HoldEvery, o.SkipBad = 64, time.Nanosecond, true // one record batch; hold after every encoder call
		return o
	}
	data := func() *memDataset { return &memDataset{n: 45, bad: map[int]bool{3: true, 30: true}} }
	whole := filepath.Join(dir, "whole.arrow")
	if _, err := Extract(context.Background(), data(), &sumEncoder{}, prep, whole, opts()); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"failure", "interrupt"} {
		out := filepath.Join(dir, how+".arrow")
		enc := &sumEncoder{failAt: 6}
		ctx, cancel := context.WithCancel(context.Background())
		if how == "interrupt" {
			enc.cancel = cancel
		}
		_, err := Extract(ctx, data(), enc, prep, out, opts())
		cancel()
		if err == nil || !strings.Contains(err.Error(), "--resume") {
			t.Fatalf("%s: %v", how, err)
		}
		if _, err := os.Stat(out + ".partial.held"); err != nil {
			t.Fatalf("%s: nothing held: %v", how, err)
		}
		opt := opts()
		opt.Resume = true
		rest := &sumEncoder{}
		res, err := Extract(context.Background(), data(), rest, prep, out, opt)
		if err != nil {
			t.Fatal(err)
		}
		// 45 examples in calls of 4: 12 calls. What the writer had held
		// when the run stopped (the encoder runs ahead of it) is not
		// redone: at least 2 calls' rows.
		if res.Resumed < 8 || rest.calls.Load() > 10 || res.Rows != 43 || res.Skipped != 2 {
			t.Errorf("%s: resumed %d rows, %d calls after it, %d rows, %d skipped", how, res.Resumed, rest.calls.Load(), res.Rows, res.Skipped)
		}
		a, _ := os.ReadFile(whole)
		b, _ := os.ReadFile(out)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the resumed file differs from the uninterrupted one", how)
		}
		for _, p := range []string{out + ".partial", out + ".partial.json", out + ".partial.held"} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("%s: %s left behind", how, p)
			}
		}
	}
}

// halfSum is a float16 model: it sums the half-precision inputs.
type halfSum struct{ runs, halves atomic.Int32 }

func (e *halfSum) Dim() int        { return 2 }
func (e *halfSum) HalfInput() bool { return true }
func (e *halfSum) Run(x []float32, n int, out []float32) error {
	e.runs.Add(1)
	h := make([]uint16, len(x))
	toHalf(h, x)
	return e.sum(h, n, out)
}
func (e *halfSum) RunHalf(h []uint16, n int, out []float32) error {
	e.halves.Add(1)
	return e.sum(h, n, out)
}
func (e *halfSum) sum(h []uint16, n int, out []float32) error {
	size := len(h) / n
	for i := 0; i < n; i++ {
		var s float32
		for _, v := range h[i*size : (i+1)*size] {
			s += f16ToF32(v)
		}
		out[2*i], out[2*i+1] = s, f16ToF32(h[i*size])
	}
	return nil
}

// onlyRun hides RunHalf: the encoder converts, as before #38.
type onlyRun struct{ Encoder }

// TestExtractConvertsHalfInWorkers (#38): for a float16 model the workers
// convert each batch, and the encoder goroutine only hands it over; the
// file is the same as when the encoder converted.
func TestExtractConvertsHalfInWorkers(t *testing.T) {
	dir := t.TempDir()
	prep := testPrep(t)
	enc := &halfSum{}
	a, b := filepath.Join(dir, "workers.arrow"), filepath.Join(dir, "encoder.arrow")
	if _, err := Extract(context.Background(), &memDataset{n: 37}, enc, prep, a, extractOpts()); err != nil {
		t.Fatal(err)
	}
	if enc.runs.Load() != 0 || enc.halves.Load() == 0 {
		t.Errorf("float32 runs %d, half runs %d: the workers did not convert", enc.runs.Load(), enc.halves.Load())
	}
	if _, err := Extract(context.Background(), &memDataset{n: 37}, onlyRun{&halfSum{}}, prep, b, extractOpts()); err != nil {
		t.Fatal(err)
	}
	x, _ := os.ReadFile(a)
	y, _ := os.ReadFile(b)
	if !bytes.Equal(x, y) {
		t.Error("converting in the workers changed the features")
	}
}
