package features

import (
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// CopyPartial copies the first `batches` record batches of an interrupted
// write's partial file at src into w and returns their row count. A partial
// file is an Arrow IPC file without its footer: the magic, then a stream of
// schema and record-batch messages, of which the last may be torn; the
// caller knows from its own records how many batches were made durable.
func CopyPartial(src string, batches int, w *Writer) (int64, error) {
	f, err := os.Open(src)
	if err != nil {
		return 0, fmt.Errorf("resume from %s: %w", src, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("resume from %s: %w", src, err)
	}
	const start = 8 // "ARROW1" and two bytes of padding
	head := make([]byte, start)
	if _, err := f.ReadAt(head, 0); err != nil || string(head[:6]) != "ARROW1" {
		return 0, fmt.Errorf("resume from %s: not a partial feature file (no ARROW1 magic)", src)
	}
	read := func(off, n int64) ([]byte, error) {
		b := make([]byte, n)
		_, err := f.ReadAt(b, start+off)
		return b, err
	}
	if err := guard(func() error { return checkIPCStreamPrefix(read, st.Size()-start, batches) }); err != nil {
		return 0, fmt.Errorf("resume from %s: the first %d record batches are not intact: %v", src, batches, err)
	}
	var r *ipc.Reader
	if err := guard(func() error {
		var err error
		r, err = ipc.NewReader(io.NewSectionReader(f, start, st.Size()-start), bodyLimit(st.Size()-start))
		return err
	}); err != nil {
		return 0, fmt.Errorf("resume from %s: %v", src, err)
	}
	defer r.Release()
	if _, _, err := checkSchema(r.Schema()); err != nil {
		return 0, fmt.Errorf("resume from %s: %v", src, err)
	}
	if !r.Schema().Equal(w.schema) || !r.Schema().Metadata().Equal(w.schema.Metadata()) {
		return 0, fmt.Errorf("resume from %s: its schema or metadata differs from this run's; start over without --resume", src)
	}
	src2 := &File{path: src, dim: w.dim, withID: w.withID, views: w.views, mixes: w.mixes}
	var rows int64
	for i := 0; i < batches; i++ {
		var ok bool
		if err := guard(func() error { ok = r.Next(); return r.Err() }); err != nil || !ok {
			return rows, fmt.Errorf("resume from %s: record batch %d is missing or damaged (%v)", src, i, err)
		}
		b, err := src2.toBatch(r.RecordBatch(), rows)
		if err != nil {
			return rows, fmt.Errorf("resume from %s: %w", src, err)
		}
		if err := w.Write(b); err != nil {
			return rows, err
		}
		rows += int64(b.Rows())
	}
	return rows, nil
}
