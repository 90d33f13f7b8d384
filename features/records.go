package features

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// recordStream is a table read one record batch at a time: an IPC stream
// reader, a Parquet record reader, or an IPC file read in order. A
// RecordBatch is valid until the next Next.
type recordStream interface {
	Schema() *arrow.Schema
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
	Release()
}

// records is an open Arrow IPC file or stream, or Parquet file, read as a
// recordStream. Schema includes a Parquet file's key-value metadata.
type records struct {
	recordStream
	schema *arrow.Schema
	close  func()
}

// Schema is the table's schema, with a Parquet file's key-value metadata.
func (r *records) Schema() *arrow.Schema { return r.schema }

// Close releases the reader and the file beneath.
func (r *records) Close() {
	r.recordStream.Release()
	r.close()
}

// openRecords opens path as format (FormatArrowFile, FormatArrowStream or
// FormatParquet). The sizes an IPC file or stream claims are checked
// against the file before the reader allocates by them, and a damaged
// file's panic is an error.
func openRecords(path, format string) (*records, error) {
	if format == FormatParquet {
		return openParquetRecords(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	read := func(off, n int64) ([]byte, error) {
		b := make([]byte, n)
		_, err := f.ReadAt(b, off)
		return b, err
	}
	var rs recordStream
	err = guard(func() error {
		if format == FormatArrowFile {
			if _, err := checkIPC(read, st.Size()); err != nil {
				return err
			}
			fr, err := ipc.NewFileReader(f, bodyLimit(st.Size()))
			if err == nil {
				rs = &fileRecords{fr: fr}
			}
			return err
		}
		if err := checkIPCStream(read, st.Size()); err != nil {
			return err
		}
		sr, err := ipc.NewReader(f, bodyLimit(st.Size()))
		if err == nil {
			rs = sr
		}
		return err
	})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: corrupt or truncated %s: %v", path, format, err)
	}
	return &records{recordStream: rs, schema: rs.Schema(), close: func() { f.Close() }}, nil
}

// openParquetRecords opens a Parquet file as records of parquetBatchRows
// rows.
func openParquetRecords(path string) (*records, error) {
	pf, fr, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	var rs recordStream
	var s *arrow.Schema
	err = guard(func() error {
		var err error
		if s, err = fr.Schema(); err != nil {
			return err
		}
		if pf.NumRowGroups() == 0 {
			rs = noRecords{s}
			return nil
		}
		rs, err = fr.GetRecordReader(context.Background(), nil, nil)
		return err
	})
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("read %s: not a readable Parquet file: %v", path, err)
	}
	return &records{recordStream: rs, schema: withFileMetadata(s, pf), close: func() { pf.Close() }}, nil
}

// fileRecords reads an Arrow IPC file's record batches in order.
type fileRecords struct {
	fr  *ipc.FileReader
	i   int
	cur arrow.RecordBatch
	err error
}

func (r *fileRecords) Schema() *arrow.Schema { return r.fr.Schema() }

func (r *fileRecords) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || r.i >= r.fr.NumRecords() {
		return false
	}
	r.cur, r.err = r.fr.RecordBatchAt(r.i)
	r.i++
	return r.err == nil
}

func (r *fileRecords) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *fileRecords) Err() error                     { return r.err }

func (r *fileRecords) Release() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	_ = guard(func() error { return r.fr.Close() })
}

// noRecords is a table without rows (a Parquet file of no row group).
type noRecords struct{ s *arrow.Schema }

func (n noRecords) Schema() *arrow.Schema        { return n.s }
func (noRecords) Next() bool                     { return false }
func (noRecords) RecordBatch() arrow.RecordBatch { return nil }
func (noRecords) Err() error                     { return nil }
func (noRecords) Release()                       {}
