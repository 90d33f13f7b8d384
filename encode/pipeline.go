package encode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/dpfeat/dpfeat/augment"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/interrupt"
	"github.com/dpfeat/dpfeat/internal/outlock"
	"github.com/dpfeat/dpfeat/models"
)

// Encoder is what the pipeline needs of a session; *Session implements it.
type Encoder interface {
	Dim() int
	Run(x []float32, n int, out []float32) error
}

// halfEncoder is an Encoder whose model may take float16 input (Session):
// Extract's workers then convert each batch as they prepare it, in
// parallel, and the encoder goroutine hands the half-precision batch to
// RunHalf — it was converting and allocating 2 bytes an element itself,
// beside the one goroutine that calls ONNX Runtime.
type halfEncoder interface {
	Encoder
	HalfInput() bool
	RunHalf(h []uint16, n int, out []float32) error
}

// ExtractOptions tunes Extract.
type ExtractOptions struct {
	// Batch is the number of images per encoder call (default 64).
	Batch int
	// Workers decode and preprocess in parallel with inference (default:
	// one per core).
	Workers int
	// RecordRows is the number of rows per record batch in the file
	// (default 4096, at least Batch).
	RecordRows int
	// HoldEvery bounds the work an interruption can lose: rows that do
	// not end a record batch yet are made durable at least this often
	// (Resumable.Hold; default 5 s, negative: only at record batches), so
	// a slow encoder loses seconds, not a record batch's minutes.
	HoldEvery time.Duration
	// Offset skips this many examples at the start of the dataset.
	Offset int64
	// Limit stops after this many examples (after Offset; 0: all).
	Limit int64
	// SkipBad skips (and counts) images that do not decode, instead of
	// failing.
	SkipBad bool
	// Public and PublicLabels are the images Meta.Views.MixDiff mixes
	// each example's views with (labels in the file's class list).
	Public       []features.Pixels
	PublicLabels []int32
	// Resume continues an interrupted extraction into the same output;
	// Restart discards an interrupted or damaged one and starts over.
	Resume, Restart bool
	// MaxInflight bounds the bytes of read and decoded images waiting to
	// be preprocessed, whatever the batch size (default 512 MiB; one
	// larger image still passes, alone).
	MaxInflight int64
	// Progress receives a progress bar (stderr); nil for none.
	// ProgressLabel starts its line ("extract" when empty).
	Progress      io.Writer
	ProgressLabel string
	// Meta is the feature file's metadata; an empty Created is filled in
	// with the start time, and a resumed run keeps the interrupted run's.
	Meta features.Metadata
	// Identity lists what must be equal for a run to resume another: the
	// model's hash, the manifest, the dataset, the batch size, ….
	Identity map[string]string
	// Augment, with Meta.Views set, makes a multi-view file: each example
	// gives Meta.Views.Views augmented views and Meta.Views.MixSelf
	// self-mixups (package augment), one row each, all naming the example.
	// Views depend on Meta.Views.Seed and the example's id only, so a
	// resumed run makes the same rows.
	Augment augment.Spec
}

// ExtractResult reports an extraction.
type ExtractResult struct {
	Out      string `json:"out"`
	Rows     int64  `json:"rows"`
	Dim      int    `json:"dim"`
	Examples int64  `json:"examples_read"`
	Skipped  int64  `json:"skipped"`
	// SkippedIDs lists the first skipped images.
	SkippedIDs []string `json:"skipped_ids,omitempty"`
	// Resumed counts the rows recovered from an interrupted run.
	Resumed         int64   `json:"resumed_rows"`
	Seconds         float64 `json:"seconds"`
	ImagesPerSecond float64 `json:"images_per_second"`
}

// ErrInterrupted is returned when the context is cancelled (Ctrl-C).
var ErrInterrupted = errors.New("interrupted")

// extractProgress is how far an extraction got, saved with each record
// batch in the partial file's state (features.Resumable) so that a resume
// skips the examples already read.
type extractProgress struct {
	Examples   int64    `json:"examples_read"`
	Skipped    int64    `json:"skipped"`
	SkippedIDs []string `json:"skipped_ids,omitempty"`
}

const maxSkippedIDs = 100

// job is a run of consecutive examples that become one encoder call.
type job struct {
	seq int
	// first is the index of the job's first example (after --offset).
	first    int64
	examples []features.Example
}

// prepared is a job after decoding and preprocessing.
type prepared struct {
	seq      int
	first    int64
	n        int // examples read
	tensor   []float32
	labels   []int32
	ids      []string
	examples []string // multi-view: each row's example
	// with mixups with public images: each row's mix label (Unlabeled but
	// in those mixups) and λ
	mixLabels  []int32
	mixLambdas []float32
	skipped    []string
	err        error
	features   []float32
	// half is tensor in half precision, for a float16 model (halfEncoder).
	half []uint16
}

// Extract runs the encoder over the dataset and writes a feature file to
// out. Decoding and preprocessing run on Workers goroutines in parallel with
// inference; queues are bounded, so memory does not grow with the dataset.
// Rows are made durable one record batch at a time in OUT.partial (with
// OUT.partial.json saying how far it got): an interrupted or failed run
// leaves them there, and a run with Resume continues from them and produces
// the same file as an uninterrupted run. The final name only ever holds a
// complete file.
func Extract(ctx context.Context, ds features.Dataset, enc Encoder, prep *Preprocessor, out string, opt ExtractOptions) (res ExtractResult, err error) {
	start := time.Now()
	if opt.Batch <= 0 {
		opt.Batch = 64
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.RecordRows <= 0 {
		opt.RecordRows = 4096
	}
	if opt.HoldEvery == 0 {
		opt.HoldEvery = 5 * time.Second
	}
	// A batch never exceeds the data (--encoder-batch 10000000 once preallocated
	// 123 GB for a small dataset).
	if n := ds.Len(); n > 0 {
		left := max(1, n-opt.Offset)
		if opt.Limit > 0 {
			left = min(left, opt.Limit)
		}
		opt.Batch = int(min(int64(opt.Batch), left))
	}
	if opt.MaxInflight <= 0 {
		opt.MaxInflight = 512 << 20
	}
	// Rows per example: one, or its views and self-mixups; --encoder-batch counts
	// rows per encoder call, so a job takes fewer examples.
	perExample := 1
	if v := opt.Meta.Views; v != nil {
		if v.Views < 1 || v.MixSelf < 0 || v.MixDiff < 0 || (v.MixSelf > 0 && (v.Views < 2 || !(v.MixAlpha > 0))) {
			return res, fmt.Errorf("views: %d views, %d self-mixups at α = %v: expected at least one view, and two views and α > 0 for mixups", v.Views, v.MixSelf, v.MixAlpha)
		}
		if v.MixDiff > 0 && (!(v.MixAlpha > 0) || len(opt.Public) == 0 || len(opt.PublicLabels) != len(opt.Public)) {
			return res, fmt.Errorf("views: %d mixups with public images at α = %v with %d images and %d labels: expected α > 0 and labelled public images", v.MixDiff, v.MixAlpha, len(opt.Public), len(opt.PublicLabels))
		}
		perExample = v.Views + v.MixSelf + v.MixDiff
		opt.Batch = max(1, opt.Batch/perExample)
	}
	opt.RecordRows = max(opt.RecordRows, opt.Batch*perExample)
	res.Out, res.Dim = out, enc.Dim()
	// One run owns the output and its partial at a time.
	release, err := outlock.Lock(out)
	if err != nil {
		return res, err
	}
	defer release()
	// From here a Ctrl-C is noticed, and the rows saved are kept.
	defer interrupt.Observe()()
	created := opt.Meta.Created
	if created == "" {
		created = models.Now()
	}
	w, err := features.CreateResumable(out, enc.Dim(), opt.Meta, features.WriterOptions{WithID: true},
		features.ResumeOptions{Resume: opt.Resume, Restart: opt.Restart, Identity: opt.Identity, Created: created, Job: "extraction"})
	if err != nil {
		return res, err
	}
	var st, held extractProgress
	if err := w.Progress(&st); err != nil {
		w.Stop()
		return res, err
	}
	heldRows, isHeld, err := w.Held(&held)
	if err != nil {
		w.Stop()
		return res, err
	}
	if !isHeld {
		held = st
	}
	res.Resumed = w.Resumed()
	defer func() {
		// Keep what is durable for --resume; nothing durable: clean up.
		if err != nil && w.Stop() {
			err = fmt.Errorf("%w; %d rows are saved in %s — rerun with --resume to continue", err, w.Rows(), w.Partial())
		}
	}()
	for i := int64(0); i < opt.Offset; i++ {
		if _, err := ds.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return res, fmt.Errorf("--offset %d: %s has only %d examples", opt.Offset, ds.Source(), i)
			}
			return res, err
		}
	}
	// Skip the examples an interrupted run already encoded (committed or
	// held).
	for i := int64(0); i < held.Examples; i++ {
		if _, err := ds.Next(); err != nil {
			return res, fmt.Errorf("resume: cannot skip the %d examples already encoded: %w", held.Examples, err)
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan job, opt.Workers)
	preparedCh := make(chan prepared, opt.Workers)
	encoded := make(chan prepared, 2)
	errc := make(chan error, 3)

	// Reader: examples in order, grouped into encoder batches. The bytes of
	// images read (encoded, or decoded by the source as IDX and CIFAR are)
	// and not yet preprocessed are bounded by MaxInflight, whatever the
	// batch (48 images of 10240×10240 once needed ≈ 15 GB).
	inflight := newBudget(opt.MaxInflight)
	base := held.Examples // examples an interrupted run already encoded
	go func() {
		defer close(jobs)
		background()
		read := base
		var carry *features.Example // read, waiting for room in the next job
		for seq := 0; ; seq++ {
			var exs []features.Example
			first := read
			if carry != nil {
				first--
				if !inflight.acquire(ctx, exampleBytes(*carry)) {
					return
				}
				exs, carry = append(exs, *carry), nil
			}
			for len(exs) < opt.Batch && (opt.Limit <= 0 || read < opt.Limit) {
				ex, err := ds.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					errc <- err
					return
				}
				read++
				n := exampleBytes(ex)
				if len(exs) > 0 && !inflight.tryAcquire(n) {
					carry = &ex // the batch so far goes now; this image starts the next
					break
				}
				if len(exs) == 0 && !inflight.acquire(ctx, n) {
					return
				}
				exs = append(exs, ex)
			}
			if len(exs) == 0 {
				return
			}
			select {
			case jobs <- job{seq: seq, first: first, examples: exs}:
			case <-ctx.Done():
				return
			}
		}
	}()

	// Workers: decode and preprocess. Tensor buffers are recycled: the
	// encoder hands each back once it has run.
	size := prep.Size()
	var tensors, featureBufs, halves sync.Pool
	half, _ := enc.(halfEncoder)
	if half != nil && !half.HalfInput() {
		half = nil
	}
	var wg sync.WaitGroup
	for i := 0; i < opt.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			background()
			for j := range jobs {
				buf, _ := tensors.Get().(*[]float32)
				if buf == nil || cap(*buf) < len(j.examples)*perExample*size {
					b := make([]float32, 0, len(j.examples)*perExample*size)
					buf = &b
				}
				p := prepared{seq: j.seq, first: j.first, n: len(j.examples), tensor: (*buf)[:0]}
				for _, ex := range j.examples {
					px, err := features.DecodeImage(ex)
					if err == nil {
						rows := exampleRows{images: []features.Pixels{px}, names: []string{ex.ID}}
						if v := opt.Meta.Views; v != nil {
							rows = views(ex, px, v, opt)
						}
						err = p.addRows(ex, rows, prep, opt.Meta.Views != nil)
					}
					if err != nil {
						if !opt.SkipBad {
							p.err = fmt.Errorf("%w (pass --skip-bad to skip such images and count them)", err)
							break
						}
						p.skipped = append(p.skipped, ex.ID)
						continue
					}
				}
				for _, ex := range j.examples {
					inflight.release(exampleBytes(ex))
				}
				if half != nil && p.err == nil {
					hb, _ := halves.Get().(*[]uint16)
					if hb == nil || cap(*hb) < len(p.tensor) {
						b := make([]uint16, len(p.tensor))
						hb = &b
					}
					p.half = (*hb)[:len(p.tensor)]
					toHalf(p.half, p.tensor)
					t := p.tensor
					tensors.Put(&t)
					p.tensor = nil
				}
				select {
				case preparedCh <- p:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(preparedCh) }()

	// Encoder: in dataset order. It is the one goroutine that calls into
	// ONNX Runtime, so every return below first cancels and waits for it:
	// the caller frees the session as soon as Extract returns, and a Run
	// still going then crashed (SIGSEGV) when a dataset error or Ctrl-C
	// arrived mid-batch.
	var encoding sync.WaitGroup
	encoding.Add(1)
	defer func() {
		cancel()
		encoding.Wait()
	}()
	go func() {
		defer encoding.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(encoded)
		pending := map[int]prepared{}
		next := 0
		for p := range preparedCh {
			pending[p.seq] = p
			for {
				q, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				if q.err != nil {
					errc <- q.err
					return
				}
				rows := len(q.labels)
				// Feature buffers are recycled too: the writer hands each
				// back once copied into its record batch (a fresh slice per
				// batch kept the garbage collector busy beside the encoder).
				fb, _ := featureBufs.Get().(*[]float32)
				if fb == nil || cap(*fb) < rows*enc.Dim() {
					b := make([]float32, rows*enc.Dim())
					fb = &b
				}
				q.features = (*fb)[:rows*enc.Dim()]
				if rows > 0 {
					var err error
					if q.half != nil {
						err = half.RunHalf(q.half, rows, q.features)
					} else {
						err = enc.Run(q.tensor, rows, q.features)
					}
					if err != nil {
						errc <- fmt.Errorf("the encoder failed on a batch of %d images starting at example %d (if the model takes a fixed batch size, pass --encoder-batch with it, e.g. --encoder-batch 1): %w", rows, q.first, err)
						return
					}
				}
				if q.half != nil {
					h := q.half
					halves.Put(&h)
					q.half = nil
				} else {
					t := q.tensor
					tensors.Put(&t)
					q.tensor = nil
				}
				select {
				case encoded <- q:
				case <-ctx.Done():
					return
				}
			}
		}
	}()

	// Writer: record batches of RecordRows rows, each made durable and
	// recorded in the state file.
	total := ds.Len()
	if total >= 0 {
		total = max(0, total-opt.Offset)
		if opt.Limit > 0 {
			total = min(total, opt.Limit)
		}
	}
	bar := newProgress(opt.Progress, opt.ProgressLabel, total, held.Examples)
	// The record batch's buffers are allocated once and reused: growing
	// them by append cost more than the rest of the pipeline.
	capRows := int64(opt.RecordRows + opt.Batch*perExample)
	if total > 0 {
		capRows = min(capRows, total*int64(perExample)) // a small dataset needs no more
	}
	acc := features.Batch{Dim: enc.Dim(), Features: make([]float32, 0, capRows*int64(enc.Dim())),
		Labels: make([]int32, 0, capRows), IDs: make([]string, 0, capRows)}
	if opt.Meta.Views != nil {
		acc.Examples = make([]string, 0, capRows)
		if opt.Meta.Views.MixDiff > 0 {
			acc.MixLabels, acc.MixLambdas = make([]int32, 0, capRows), make([]float32, 0, capRows)
		}
	}
	var accExamples, accSkipped int64
	var accSkippedIDs []string
	if isHeld {
		// The held rows start the record batch again, as they did.
		for i := range heldRows.Rows() {
			acc.AppendRow(heldRows, i)
		}
		accExamples, accSkipped = held.Examples-st.Examples, held.Skipped-st.Skipped
		if len(held.SkippedIDs) > len(st.SkippedIDs) {
			accSkippedIDs = held.SkippedIDs[len(st.SkippedIDs):]
		}
	}
	lastDurable := time.Now()
	// hold makes the rows since the last record batch durable, with the
	// progress they would commit.
	hold := func() error {
		p := extractProgress{Examples: st.Examples + accExamples, Skipped: st.Skipped + accSkipped, SkippedIDs: slices.Clone(st.SkippedIDs)}
		for _, id := range accSkippedIDs {
			if len(p.SkippedIDs) < maxSkippedIDs {
				p.SkippedIDs = append(p.SkippedIDs, id)
			}
		}
		lastDurable = time.Now()
		return w.Hold(acc, p)
	}
	flush := func() error {
		if acc.Rows() == 0 && accExamples == 0 {
			return nil
		}
		if err := w.Write(acc); err != nil {
			return err
		}
		st.Examples += accExamples
		st.Skipped += accSkipped
		for _, id := range accSkippedIDs {
			if len(st.SkippedIDs) < maxSkippedIDs {
				st.SkippedIDs = append(st.SkippedIDs, id)
			}
		}
		if err := w.Commit(st); err != nil {
			return err
		}
		acc.Features, acc.Labels, acc.IDs = acc.Features[:0], acc.Labels[:0], acc.IDs[:0]
		if acc.Examples != nil {
			acc.Examples = acc.Examples[:0]
		}
		if acc.MixLabels != nil {
			acc.MixLabels, acc.MixLambdas = acc.MixLabels[:0], acc.MixLambdas[:0]
		}
		accExamples, accSkipped, accSkippedIDs = 0, 0, nil
		lastDurable = time.Now()
		return nil
	}
	for running := true; running; {
		select {
		case <-ctx.Done():
			bar.finish()
			return res, ErrInterrupted
		case err := <-errc:
			bar.finish()
			return res, err
		case q, ok := <-encoded:
			if !ok {
				running = false
				break
			}
			acc.Features = append(acc.Features, q.features...)
			f := q.features
			featureBufs.Put(&f)
			acc.Labels = append(acc.Labels, q.labels...)
			acc.IDs = append(acc.IDs, q.ids...)
			if acc.Examples != nil {
				acc.Examples = append(acc.Examples, q.examples...)
			}
			if acc.MixLabels != nil {
				acc.MixLabels, acc.MixLambdas = append(acc.MixLabels, q.mixLabels...), append(acc.MixLambdas, q.mixLambdas...)
			}
			accExamples += int64(q.n)
			accSkipped += int64(len(q.skipped))
			accSkippedIDs = append(accSkippedIDs, q.skipped...)
			if acc.Rows() >= opt.RecordRows {
				if err := flush(); err != nil {
					bar.finish()
					return res, err
				}
			} else if opt.HoldEvery > 0 && time.Since(lastDurable) >= opt.HoldEvery {
				if err := hold(); err != nil {
					bar.finish()
					return res, err
				}
			}
			bar.add(int64(q.n))
		}
	}
	// The encoder may have stopped on an error after its last batch.
	select {
	case err := <-errc:
		bar.finish()
		return res, err
	default:
	}
	if err := ctx.Err(); err != nil {
		bar.finish()
		return res, ErrInterrupted
	}
	if err := flush(); err != nil {
		bar.finish()
		return res, err
	}
	bar.finish()
	if w.Rows() == 0 {
		return res, fmt.Errorf("no image of %s could be encoded (%d skipped)", ds.Source(), st.Skipped)
	}
	res.Rows = w.Rows()
	if err := w.Close(); err != nil {
		return res, err
	}
	res.Examples, res.Skipped, res.SkippedIDs = st.Examples, st.Skipped, st.SkippedIDs
	res.Seconds = time.Since(start).Seconds()
	if res.Seconds > 0 {
		res.ImagesPerSecond = float64(res.Examples-res.Resumed) / res.Seconds
	}
	return res, nil
}

// exampleBytes is what an example read holds in memory.
func exampleBytes(ex features.Example) int64 {
	n := int64(len(ex.Encoded))
	if ex.Pixels != nil {
		n += int64(len(ex.Pixels.Data))
	}
	return n
}

// budget is a byte count shared between the reader and the workers.
type budget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	limit int64
	used  int64
}

func newBudget(limit int64) *budget {
	b := &budget{limit: limit}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquire waits until n bytes fit (or nothing else is held, so that one
// large item passes alone); false when ctx ends first.
func (b *budget) acquire(ctx context.Context, n int64) bool {
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.used > 0 && b.used+n > b.limit {
		if ctx.Err() != nil {
			return false
		}
		b.cond.Wait()
	}
	b.used += n
	return ctx.Err() == nil
}

// tryAcquire takes n bytes if they fit now.
func (b *budget) tryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used > 0 && b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}

// exampleRows are the images an example gives and their rows' ids (and,
// with mixups with public images, every row's mix label and λ).
type exampleRows struct {
	images     []features.Pixels
	names      []string
	mixLabels  []int32
	mixLambdas []float32
}

// views returns an example's augmented views, self-mixups and mixups with
// public images, with their row ids ID#v0…, ID#m0…, ID#d0….
func views(ex features.Example, px features.Pixels, v *features.Views, opt ExtractOptions) exampleRows {
	images := opt.Augment.Views(px, v.Views, v.Seed, ex.ID)
	r := exampleRows{images: images}
	for i := range images {
		r.names = append(r.names, fmt.Sprintf("%s#v%d", ex.ID, i))
	}
	if v.MixSelf > 0 {
		mixes, _ := augment.SelfMixes(images, v.MixSelf, v.MixAlpha, v.Seed, ex.ID)
		for i := range mixes {
			r.names = append(r.names, fmt.Sprintf("%s#m%d", ex.ID, i))
		}
		r.images = append(r.images, mixes...)
	}
	if v.MixDiff > 0 {
		r.mixLabels = make([]int32, len(r.images), len(r.images)+v.MixDiff)
		r.mixLambdas = make([]float32, len(r.images), len(r.images)+v.MixDiff)
		for i := range r.mixLabels {
			r.mixLabels[i] = features.Unlabeled
		}
		mixes, partners, lambdas := augment.DiffMixes(images, opt.Public, v.MixDiff, v.MixAlpha, v.Seed, ex.ID)
		for i := range mixes {
			r.names = append(r.names, fmt.Sprintf("%s#d%d", ex.ID, i))
			r.mixLabels = append(r.mixLabels, opt.PublicLabels[partners[i]])
			r.mixLambdas = append(r.mixLambdas, float32(lambdas[i]))
		}
		r.images = append(r.images, mixes...)
	}
	return r
}

// addRows preprocesses an example's images into the tensor, one row each
// with the example's label and the given row ids (and, in a multi-view
// file, the example's id). On an error no row of the example is kept.
func (p *prepared) addRows(ex features.Example, rows exampleRows, prep *Preprocessor, multiView bool) error {
	size := prep.Size()
	start := len(p.tensor)
	for _, img := range rows.images {
		p.tensor = p.tensor[:len(p.tensor)+size]
		if err := prep.Apply(img, p.tensor[len(p.tensor)-size:]); err != nil {
			p.tensor = p.tensor[:start]
			return fmt.Errorf("%s: %w", ex.ID, err)
		}
	}
	for _, name := range rows.names {
		p.labels = append(p.labels, ex.Label)
		p.ids = append(p.ids, name)
		if multiView {
			p.examples = append(p.examples, ex.ID)
		}
	}
	p.mixLabels, p.mixLambdas = append(p.mixLabels, rows.mixLabels...), append(p.mixLambdas, rows.mixLambdas...)
	return nil
}
