package features

import (
	"errors"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dpfeat/dpfeat/internal/atomicfile"
)

// WriterOptions tunes Create.
type WriterOptions struct {
	// WithID adds the optional id column.
	WithID bool
	// AllowNonFinite writes NaN and ±Inf features (a conversion for
	// inspect, which counts them); otherwise a batch holding one is
	// refused.
	AllowNonFinite bool
	// Allocator for Arrow buffers; nil means Go's allocator.
	Allocator memory.Allocator
	// Partial, when set, is the path rows are written to before Close
	// renames it to the destination, instead of a hidden temporary file.
	// A long job names it so that an interrupted run can be resumed from
	// it (Suspend keeps it; see CopyPartial).
	Partial string
}

// Writer appends record batches to a feature file. Nothing appears at the
// destination until Close succeeds: rows go to a temporary file in the same
// folder, which Close fsyncs and renames over the destination, so a failed
// or interrupted write never leaves a partial file and never replaces a good
// one.
type Writer struct {
	path, tmp string
	f         *os.File
	w         *ipc.FileWriter
	schema    *arrow.Schema
	dim       int
	withID    bool
	views     bool // multi-view: rows carry their example
	mixes     bool // and mixups with public images carry soft labels
	classes   int
	nonFinite bool
	rows      int64
	batches   int
	mem       memory.Allocator
	done      bool
}

// Create starts a feature file of dimension dim at path.
func Create(path string, dim int, meta Metadata, opt WriterOptions) (*Writer, error) {
	if dim < 1 {
		return nil, fmt.Errorf("create %s: feature dimension must be at least 1, got %d", path, dim)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("create %s: is a directory", path)
	}
	var f *os.File
	var err error
	if opt.Partial != "" {
		// A new file (never one that exists, nor a link planted there:
		// O_EXCL does not follow links), 0666 less the umask.
		f, err = os.OpenFile(opt.Partial, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	} else {
		f, err = atomicfile.Temp(path)
	}
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	mem := opt.Allocator
	if mem == nil {
		mem = memory.NewGoAllocator()
	}
	s := schema(dim, opt.WithID, meta)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(s), ipc.WithAllocator(mem))
	if err != nil {
		atomicfile.Discard(f)
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &Writer{path: path, tmp: f.Name(), f: f, w: w, schema: s, dim: dim, withID: opt.WithID, views: meta.Views != nil, mixes: meta.Views != nil && meta.Views.MixDiff > 0, classes: len(meta.Classes), nonFinite: opt.AllowNonFinite, mem: mem}, nil
}

// Rows returns the number of rows written so far.
func (w *Writer) Rows() int64 { return w.rows }

// NumBatches returns the number of record batches written so far.
func (w *Writer) NumBatches() int { return w.batches }

// Write appends one batch as one record batch. Its rows are checked first
// (shape, finite features, labels within the class list); a bad batch is
// refused whole and the file is left as it was before the call.
func (w *Writer) Write(b Batch) error {
	if w.done {
		return fmt.Errorf("write %s: writer already closed", w.path)
	}
	if b.Dim != w.dim {
		return fmt.Errorf("write %s: batch has dimension %d, file has %d", w.path, b.Dim, w.dim)
	}
	b.Offset = w.rows
	if err := b.check(w.classes, w.nonFinite); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if b.IDs != nil && !w.withID {
		return fmt.Errorf("write %s: batch has ids but the file was created without an id column", w.path)
	}
	for i, id := range b.IDs {
		if !utf8.ValidString(id) {
			return fmt.Errorf("write %s: row %d: the id is not valid UTF-8 (features.ExampleID escapes names)", w.path, b.Offset+int64(i))
		}
	}
	n := b.Rows()
	if n == 0 {
		return nil
	}
	if (b.Examples != nil) != w.views {
		return fmt.Errorf("write %s: a multi-view file's rows name their example, and only its rows do (batch has example ids: %v, file is multi-view: %v)", w.path, b.Examples != nil, w.views)
	}
	if (b.MixLabels != nil) != w.mixes {
		return fmt.Errorf("write %s: a file with mixups with public images gives every row a mix label (null but in the mixups), and only its rows do (batch has mix labels: %v, file has mixups: %v)", w.path, b.MixLabels != nil, w.mixes)
	}
	for i, e := range b.Examples {
		if e == "" || !utf8.ValidString(e) {
			return fmt.Errorf("write %s: row %d: the example id is empty or not UTF-8", w.path, b.Offset+int64(i))
		}
	}
	rec := w.record(b)
	defer rec.Release()
	if err := w.w.Write(rec); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	w.rows += int64(n)
	w.batches++
	return nil
}

// record builds an Arrow record over the batch's memory (features and
// labels are not copied).
func (w *Writer) record(b Batch) arrow.RecordBatch {
	n := b.Rows()
	values := array.NewData(arrow.PrimitiveTypes.Float32, n*w.dim,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(b.Features))}, nil, 0, 0)
	defer values.Release()
	feats := array.NewData(w.schema.Field(0).Type, n, []*memory.Buffer{nil}, []arrow.ArrayData{values}, 0, 0)
	defer feats.Release()
	featArr := array.MakeFromData(feats)
	defer featArr.Release()

	var validity *memory.Buffer
	nulls := 0
	for _, l := range b.Labels {
		if l == Unlabeled {
			nulls++
		}
	}
	if nulls > 0 {
		bits := make([]byte, bitutil.BytesForBits(int64(n)))
		for i, l := range b.Labels {
			if l != Unlabeled {
				bitutil.SetBit(bits, i)
			}
		}
		validity = memory.NewBufferBytes(bits)
	}
	labels := array.NewData(arrow.PrimitiveTypes.Int32, n,
		[]*memory.Buffer{validity, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(b.Labels))}, nil, nulls, 0)
	defer labels.Release()
	labelArr := array.MakeFromData(labels)
	defer labelArr.Release()

	cols := []arrow.Array{featArr, labelArr}
	if w.withID {
		sb := array.NewStringBuilder(w.mem)
		defer sb.Release()
		sb.Reserve(n)
		for i := 0; i < n; i++ {
			if b.IDs == nil {
				sb.AppendNull()
			} else {
				sb.Append(b.IDs[i])
			}
		}
		ids := sb.NewArray()
		defer ids.Release()
		cols = append(cols, ids)
	}
	if w.views {
		eb := array.NewStringBuilder(w.mem)
		defer eb.Release()
		eb.AppendValues(b.Examples, nil)
		ex := eb.NewArray()
		defer ex.Release()
		cols = append(cols, ex)
	}
	if w.mixes {
		lb := array.NewInt32Builder(w.mem)
		defer lb.Release()
		fb := array.NewFloat32Builder(w.mem)
		defer fb.Release()
		for i, l := range b.MixLabels {
			if l == Unlabeled {
				lb.AppendNull()
				fb.AppendNull()
			} else {
				lb.Append(l)
				fb.Append(b.MixLambdas[i])
			}
		}
		la, fa := lb.NewArray(), fb.NewArray()
		defer la.Release()
		defer fa.Release()
		cols = append(cols, la, fa)
	}
	return array.NewRecordBatch(w.schema, cols, int64(n))
}

// Close finishes the file, fsyncs it and renames it over the destination.
// A file without rows is an error, and nothing is written.
func (w *Writer) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	if w.rows == 0 {
		w.abort()
		return fmt.Errorf("write %s: no rows; a feature file needs at least one", w.path)
	}
	if err := w.w.Close(); err != nil {
		atomicfile.Discard(w.f)
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return atomicfile.Commit(w.f, w.path)
}

// Sync makes every row written so far durable: after it returns, a crash
// leaves them in the partial file (see WriterOptions.Partial).
func (w *Writer) Sync() error {
	if w.done {
		return fmt.Errorf("sync %s: writer already closed", w.path)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", w.tmp, err)
	}
	return nil
}

// Suspend stops writing and keeps what was written in the partial file,
// durable, for a later resume; the destination is untouched. Without a
// named partial file it is the same as Abort.
func (w *Writer) Suspend() error {
	if w.done {
		return nil
	}
	w.done = true
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Abort discards everything written; the destination is untouched.
func (w *Writer) Abort() {
	if !w.done {
		w.done = true
		w.abort()
	}
}

func (w *Writer) abort() {
	_ = w.w.Close()
	atomicfile.Discard(w.f) // the temporary or partial file this writer made
}

// WriteFile writes the batches to a new feature file at path in one go.
func WriteFile(path string, meta Metadata, opt WriterOptions, batches ...Batch) error {
	if len(batches) == 0 {
		return fmt.Errorf("write %s: no rows; a feature file needs at least one", path)
	}
	w, err := Create(path, batches[0].Dim, meta, opt)
	if err != nil {
		return err
	}
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

var errClosed = errors.New("feature file is closed")
