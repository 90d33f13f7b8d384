package features

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetBatchRows is the rows per block read from Parquet: memory stays
// at one block (plus a row group's compressed pages), whatever the file.
const parquetBatchRows = 8192

// openParquet opens a Parquet file for reading as Arrow records of
// parquetBatchRows rows.
func openParquet(path string) (*file.Reader, *pqarrow.FileReader, error) {
	var pf *file.Reader
	err := guard(func() error {
		var err error
		pf, err = file.OpenParquetFile(path, false)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: not a readable Parquet file: %v", path, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: parquetBatchRows}, memory.NewGoAllocator())
	if err != nil {
		pf.Close()
		return nil, nil, fmt.Errorf("read %s: Parquet schema: %v", path, err)
	}
	return pf, fr, nil
}

// parquetSource reads a Parquet feature table: a list column of numbers
// (fixed-size or variable), or one numeric column per dimension.
type parquetSource struct {
	path    string
	pf      *file.Reader
	fr      *pqarrow.FileReader
	rr      pqarrow.RecordReader
	row     int64
	plan    *columnPlan
	pending *rawBatch
}

func openParquetSource(path string, opt ImportOptions) (source, error) {
	s := &parquetSource{path: path}
	if err := s.reset(); err != nil {
		return nil, err
	}
	schema, err := s.fr.Schema()
	if err != nil {
		s.close()
		return nil, fmt.Errorf("read %s: Parquet schema: %v", path, err)
	}
	if s.plan, err = planColumns(withFileMetadata(schema, s.pf), opt); err != nil {
		s.close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if s.pending, err = s.next(); err != nil && !errors.Is(err, io.EOF) {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *parquetSource) reset() error {
	s.close()
	pf, fr, err := openParquet(s.path)
	if err != nil {
		return err
	}
	s.pf, s.fr, s.row, s.pending = pf, fr, 0, nil
	return nil
}

func (s *parquetSource) next() (*rawBatch, error) {
	if p := s.pending; p != nil {
		s.pending = nil
		return p, nil
	}
	if s.rr == nil {
		if s.pf.NumRowGroups() == 0 {
			return nil, io.EOF
		}
		if err := guard(func() error {
			var err error
			s.rr, err = s.fr.GetRecordReader(context.Background(), nil, nil)
			return err
		}); err != nil {
			return nil, fmt.Errorf("read %s: %v", s.path, err)
		}
	}
	for {
		var rec arrow.RecordBatch
		err := guard(func() error {
			if !s.rr.Next() {
				if err := s.rr.Err(); err != nil && !errors.Is(err, io.EOF) {
					return err
				}
				return io.EOF
			}
			rec = s.rr.RecordBatch()
			return nil
		})
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: at row %d: %v", s.path, s.row, err)
		}
		if rec.NumRows() == 0 {
			continue
		}
		b, err := s.plan.guardedBatch(rec, s.row)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", s.path, err)
		}
		s.row += int64(b.rows())
		return b, nil
	}
}

func (s *parquetSource) dim() int        { return s.plan.dim }
func (s *parquetSource) kind() labelKind { return s.plan.kind }
func (s *parquetSource) meta() Metadata  { return s.plan.meta }
func (s *parquetSource) hasIDs() bool    { return s.plan.id >= 0 }
func (s *parquetSource) columns() string { return s.plan.describe() }

func (s *parquetSource) close() error {
	if s.rr != nil {
		s.rr.Release()
		s.rr = nil
	}
	if s.pf != nil {
		s.pf.Close()
		s.pf = nil
	}
	return nil
}

// withFileMetadata adds the Parquet file's key-value metadata to the
// schema's (which carries it only when the writer stored an Arrow schema):
// a Hugging Face file's class names and dpfeat's own keys live there.
func withFileMetadata(s *arrow.Schema, pf *file.Reader) *arrow.Schema {
	md := s.Metadata()
	keys, vals := slices.Clone(md.Keys()), slices.Clone(md.Values())
	for _, kv := range pf.MetaData().KeyValueMetadata() {
		if kv.Key != "ARROW:schema" && kv.Value != nil && md.FindKey(kv.Key) < 0 {
			keys, vals = append(keys, kv.Key), append(vals, *kv.Value)
		}
	}
	meta := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(s.Fields(), &meta)
}
