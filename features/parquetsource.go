package features

import (
	"fmt"
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
