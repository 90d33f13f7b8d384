package features

import (
	"archive/zip"
	"bufio"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dpfeat/dpfeat/internal/atomicfile"
)

// Table formats that feature and prediction files are written in, chosen
// by the output's extension (TableFormat).
const (
	TableArrow   = "arrow"
	TableParquet = "parquet"
	TableCSV     = "csv"
	TableTSV     = "tsv"
	TableNPY     = "npy"
	TableNPZ     = "npz"
)

// TableExtensions are the extensions of the table formats, the outputs of
// predict and convert.
var TableExtensions = []string{".arrow", ".feather", ".ipc", ".parquet", ".pq", ".csv", ".tsv", ".npy", ".npz"}

// TableFormat returns the table format of an output path from its
// extension: .parquet, .csv, .tsv, .npy, .npz; anything else is Arrow.
func TableFormat(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".pq":
		return TableParquet
	case ".csv":
		return TableCSV
	case ".tsv":
		return TableTSV
	case ".npy":
		return TableNPY
	case ".npz":
		return TableNPZ
	}
	return TableArrow
}

// Export writes the open feature file f to path (atomically) in the format
// its extension names (TableFormat):
//   - Arrow: a dpfeat feature file;
//   - Parquet: the same columns and metadata (dpfeat reads it back as it
//     was; pandas, polars and DuckDB read it without options);
//   - CSV/TSV: a header row id, label, f0 … f{D−1}; labels as class names
//     (a CSV holds no class list: pass --classes to read it back in the
//     same class order), unlabeled rows empty; floats printed exactly;
//   - .npy: the features alone, float32 (rows, D);
//   - .npz: X (float32), y (int32 class indices, −1 unlabeled), classes
//     (str), ids (str) and data_id (str, one element: the source data's
//     identity, which keys its budget ledger) when the file has them —
//     np.load reads it.
func Export(f *File, path string) error {
	if f.Views() != nil && TableFormat(path) != TableArrow {
		return fmt.Errorf("%s is multi-view: it is written as a dpfeat .arrow file, the format that keeps each row's example (the others would drop the privacy unit)", f.Path())
	}
	switch TableFormat(path) {
	case TableArrow:
		return copyNative(f, path)
	case TableParquet:
		return atomicfile.Write(path, func(w io.Writer) error { return exportParquet(f, w) })
	case TableCSV, TableTSV:
		return atomicfile.Write(path, func(w io.Writer) error { return exportCSV(f, w, TableFormat(path) == TableTSV) })
	case TableNPY:
		return atomicfile.Write(path, func(w io.Writer) error { return writeNPYFeatures(f, w) })
	default:
		return atomicfile.Write(path, func(w io.Writer) error { return exportNPZ(f, w) })
	}
}

func exportParquet(f *File, w io.Writer) error {
	s := schema(f.Dim(), f.HasIDs(), f.Metadata())
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	pw, err := pqarrow.NewFileWriter(s, struct{ io.Writer }{w}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return err
	}
	rw := &Writer{schema: s, dim: f.Dim(), withID: f.HasIDs(), mem: memory.NewGoAllocator()}
	if err := f.Each(func(b Batch) error {
		rec := rw.record(b)
		defer rec.Release()
		return pw.Write(rec)
	}); err != nil {
		pw.Close()
		return err
	}
	return pw.Close()
}

func formatFloat(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }

func exportCSV(f *File, w io.Writer, tabs bool) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := csv.NewWriter(bw)
	if tabs {
		cw.Comma = '\t'
	}
	head := []string{}
	if f.HasIDs() {
		head = append(head, ColID)
	}
	head = append(head, ColLabel)
	for j := 0; j < f.Dim(); j++ {
		head = append(head, "f"+strconv.Itoa(j))
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	classes := f.Classes()
	rec := make([]string, len(head))
	if err := f.Each(func(b Batch) error {
		for i := 0; i < b.Rows(); i++ {
			rec = rec[:0]
			if f.HasIDs() {
				rec = append(rec, b.IDs[i])
			}
			switch l := b.Labels[i]; {
			case l == Unlabeled:
				rec = append(rec, "")
			case len(classes) > 0:
				rec = append(rec, classes[l])
			default:
				rec = append(rec, strconv.Itoa(int(l)))
			}
			for _, v := range b.Row(i) {
				rec = append(rec, formatFloat(v))
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// npyHeaderBytes returns the header of a version 1.0 .npy array.
func npyHeaderBytes(descr string, shape ...int) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	sh := strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, sh)
	// Magic (6) + version (2) + length (2) + dict + padding + '\n' is a
	// multiple of 64.
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	h := make([]byte, 0, total+pad)
	h = append(h, "\x93NUMPY\x01\x00"...)
	h = binary.LittleEndian.AppendUint16(h, uint16(len(dict)+pad+1))
	h = append(h, dict...)
	h = append(h, strings.Repeat(" ", pad)...)
	return append(h, '\n')
}

func writeNPYFeatures(f *File, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.Write(npyHeaderBytes("<f4", int(f.Rows()), f.Dim())); err != nil {
		return err
	}
	buf := make([]byte, 4)
	if err := f.Each(func(b Batch) error {
		for _, v := range b.Features {
			binary.LittleEndian.PutUint32(buf, math.Float32bits(v))
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return bw.Flush()
}

// writeNPYInt32 writes a 1-D int32 array.
func writeNPYInt32(w io.Writer, v []int32) error {
	b := npyHeaderBytes("<i4", len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	_, err := w.Write(b)
	return err
}

// writeNPYFloat32 writes a rows×cols float32 array.
func writeNPYFloat32(w io.Writer, v []float32, rows, cols int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.Write(npyHeaderBytes("<f4", rows, cols)); err != nil {
		return err
	}
	buf := make([]byte, 4)
	for _, x := range v {
		binary.LittleEndian.PutUint32(buf, math.Float32bits(x))
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writeNPYStrings writes a 1-D str array (UTF-32, NumPy's <U).
func writeNPYStrings(w io.Writer, v []string) error {
	width := 1
	for _, s := range v {
		width = max(width, len([]rune(s)))
	}
	bw := bufio.NewWriter(w)
	if _, err := bw.Write(npyHeaderBytes("<U"+strconv.Itoa(width), len(v))); err != nil {
		return err
	}
	cell := make([]byte, 4*width)
	for _, s := range v {
		clear(cell)
		k := 0
		for _, r := range s {
			binary.LittleEndian.PutUint32(cell[k:], uint32(r))
			k += 4
		}
		if _, err := bw.Write(cell); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func npzEntry(zw *zip.Writer, name string, write func(io.Writer) error) error {
	e, err := zw.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Store})
	if err != nil {
		return err
	}
	return write(e)
}

func exportNPZ(f *File, w io.Writer) error {
	zw := zip.NewWriter(w)
	if err := npzEntry(zw, "X", func(w io.Writer) error { return writeNPYFeatures(f, w) }); err != nil {
		return err
	}
	labels := make([]int32, 0, f.Rows())
	var ids []string
	if err := f.Each(func(b Batch) error {
		labels = append(labels, b.Labels...)
		ids = append(ids, b.IDs...)
		return nil
	}); err != nil {
		return err
	}
	if err := npzEntry(zw, "y", func(w io.Writer) error { return writeNPYInt32(w, labels) }); err != nil {
		return err
	}
	if c := f.Classes(); len(c) > 0 {
		if err := npzEntry(zw, "classes", func(w io.Writer) error { return writeNPYStrings(w, c) }); err != nil {
			return err
		}
	}
	if f.HasIDs() {
		if err := npzEntry(zw, "ids", func(w io.Writer) error { return writeNPYStrings(w, ids) }); err != nil {
			return err
		}
	}
	if id := f.Metadata().DataID; id != "" {
		// The data identity travels with the data (#36 item 5): it keys
		// the data's budget ledger wherever the file goes.
		if err := npzEntry(zw, NPZDataID, func(w io.Writer) error { return writeNPYStrings(w, []string{id}) }); err != nil {
			return err
		}
	}
	return zw.Close()
}
