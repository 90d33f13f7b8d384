package features

import (
	"archive/zip"
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dpfeat/dpfeat/internal/atomicfile"
)

// Predictions are a classifier's outputs for a feature file, written by
// WritePredictions as an Arrow IPC file with columns id (utf8, when known),
// label (int32, the true label, null if unknown), predicted (int32),
// predicted_class (utf8) and scores (fixed_size_list<float32>[M]).
type Predictions struct {
	Classes   []string
	IDs       []string
	Labels    []int32
	Predicted []int32
	// Scores holds len(Predicted)·len(Classes) values, row-major.
	Scores   []float32
	Metadata map[string]string
}

// WritePredictions writes p to path atomically, in the format the path's
// extension names (TableFormat): Arrow (above), Parquet (the same columns),
// CSV/TSV, .npy (the scores) or .npz.
func WritePredictions(path string, p Predictions) error {
	n, m := len(p.Predicted), len(p.Classes)
	if n == 0 || len(p.Scores) != n*m || len(p.Labels) != n || (p.IDs != nil && len(p.IDs) != n) {
		return fmt.Errorf("write %s: inconsistent predictions (%d rows, %d classes)", path, n, m)
	}
	mem := memory.NewGoAllocator()
	fields := []arrow.Field{}
	var cols []arrow.Array
	if p.IDs != nil {
		b := array.NewStringBuilder(mem)
		b.AppendValues(p.IDs, nil)
		fields = append(fields, arrow.Field{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true})
		cols = append(cols, b.NewArray())
	}
	lb := array.NewInt32Builder(mem)
	for _, l := range p.Labels {
		if l == Unlabeled {
			lb.AppendNull()
		} else {
			lb.Append(l)
		}
	}
	pb := array.NewInt32Builder(mem)
	pb.AppendValues(p.Predicted, nil)
	cb := array.NewStringBuilder(mem)
	for _, k := range p.Predicted {
		cb.Append(p.Classes[k])
	}
	sb := array.NewFixedSizeListBuilder(mem, int32(m), arrow.PrimitiveTypes.Float32)
	vb := sb.ValueBuilder().(*array.Float32Builder)
	for i := 0; i < n; i++ {
		sb.Append(true)
		vb.AppendValues(p.Scores[i*m:(i+1)*m], nil)
	}
	fields = append(fields,
		arrow.Field{Name: "label", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "predicted", Type: arrow.PrimitiveTypes.Int32},
		arrow.Field{Name: "predicted_class", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "scores", Type: arrow.FixedSizeListOf(int32(m), arrow.PrimitiveTypes.Float32)})
	cols = append(cols, lb.NewArray(), pb.NewArray(), cb.NewArray(), sb.NewArray())
	md := Metadata{Classes: p.Classes, Extra: p.Metadata}.arrow()
	s := arrow.NewSchema(fields, &md)
	rec := array.NewRecordBatch(s, cols, int64(n))
	defer rec.Release()
	return atomicfile.Write(path, func(f io.Writer) error {
		switch TableFormat(path) {
		case TableParquet:
			props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
			pw, err := pqarrow.NewFileWriter(s, struct{ io.Writer }{f}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
			if err != nil {
				return err
			}
			if err := pw.Write(rec); err != nil {
				pw.Close()
				return err
			}
			return pw.Close()
		case TableCSV, TableTSV:
			return p.csv(f, TableFormat(path) == TableTSV)
		case TableNPY:
			return writeNPYFloat32(f, p.Scores, n, m)
		case TableNPZ:
			return p.npz(f)
		}
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(s))
		if err != nil {
			return err
		}
		if err := w.Write(rec); err != nil {
			return err
		}
		return w.Close()
	})
}

// csv writes the predictions as CSV: id (when known), label and
// predicted_class as class names (label empty when unknown), predicted
// (the class index), and one score_<class> column per class.
func (p Predictions) csv(w io.Writer, tabs bool) error {
	bw := bufio.NewWriter(w)
	cw := csv.NewWriter(bw)
	if tabs {
		cw.Comma = '\t'
	}
	head := []string{}
	if p.IDs != nil {
		head = append(head, "id")
	}
	head = append(head, "label", "predicted", "predicted_class")
	for _, c := range p.Classes {
		head = append(head, "score_"+c)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	m := len(p.Classes)
	for i, k := range p.Predicted {
		rec := make([]string, 0, len(head))
		if p.IDs != nil {
			rec = append(rec, p.IDs[i])
		}
		label := ""
		if l := p.Labels[i]; l != Unlabeled {
			label = p.Classes[l]
		}
		rec = append(rec, label, strconv.Itoa(int(k)), p.Classes[k])
		for _, v := range p.Scores[i*m : (i+1)*m] {
			rec = append(rec, formatFloat(v))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// npz writes the predictions as an .npz archive: scores (float32 rows×M),
// predicted and labels (int32, −1 unknown), classes, and ids when known.
func (p Predictions) npz(w io.Writer) error {
	zw := zip.NewWriter(w)
	n, m := len(p.Predicted), len(p.Classes)
	if err := npzEntry(zw, "scores", func(w io.Writer) error { return writeNPYFloat32(w, p.Scores, n, m) }); err != nil {
		return err
	}
	if err := npzEntry(zw, "predicted", func(w io.Writer) error { return writeNPYInt32(w, p.Predicted) }); err != nil {
		return err
	}
	if err := npzEntry(zw, "labels", func(w io.Writer) error { return writeNPYInt32(w, p.Labels) }); err != nil {
		return err
	}
	if err := npzEntry(zw, "classes", func(w io.Writer) error { return writeNPYStrings(w, p.Classes) }); err != nil {
		return err
	}
	if p.IDs != nil {
		if err := npzEntry(zw, "ids", func(w io.Writer) error { return writeNPYStrings(w, p.IDs) }); err != nil {
			return err
		}
	}
	return zw.Close()
}

// ErrNotPredictions is ReadPredictions' error for a file that is not a
// predictions file (another Arrow file, or another format).
var ErrNotPredictions = errors.New("not a dpfeat predictions file")

// ReadPredictions reads a predictions file written by WritePredictions in
// Arrow; for any other file it returns an error wrapping ErrNotPredictions.
func ReadPredictions(path string) (Predictions, error) {
	var p Predictions
	fail := func(format string, args ...any) (Predictions, error) {
		return Predictions{}, fmt.Errorf("read %s: %s", path, fmt.Sprintf(format, args...))
	}
	if format, err := sniff(path); err != nil {
		return p, err
	} else if format != FormatArrowFile {
		return p, fmt.Errorf("read %s: %w", path, ErrNotPredictions)
	}
	r, err := openRecords(path, FormatArrowFile)
	if err != nil {
		return p, err
	}
	defer r.Close()
	s := r.Schema()
	if !s.HasField("predicted") || !s.HasField("scores") || s.HasField(ColFeatures) {
		return p, fmt.Errorf("read %s: %w", path, ErrNotPredictions)
	}
	meta, err := parseMetadata(s.Metadata())
	if err != nil {
		return fail("%v", err)
	}
	p.Classes, p.Metadata = meta.Classes, meta.Extra
	m := len(p.Classes)
	col := func(rec arrow.RecordBatch, name string) arrow.Array {
		if i := s.FieldIndices(name); len(i) == 1 {
			return rec.Column(i[0])
		}
		return nil
	}
	err = guard(func() error {
		for r.Next() {
			rec := r.RecordBatch()
			lab, _ := col(rec, "label").(*array.Int32)
			pred, _ := col(rec, "predicted").(*array.Int32)
			sc, _ := col(rec, "scores").(*array.FixedSizeList)
			if lab == nil || pred == nil || sc == nil || int(sc.DataType().(*arrow.FixedSizeListType).Len()) != m {
				return fmt.Errorf("not a dpfeat predictions file (columns label, predicted: int32; scores: fixed_size_list<float32>[%d])", m)
			}
			vals, ok := sc.ListValues().(*array.Float32)
			if !ok {
				return fmt.Errorf("scores are not float32")
			}
			n := int(rec.NumRows())
			for i := 0; i < n; i++ {
				l := int32(Unlabeled)
				if lab.IsValid(i) {
					l = lab.Value(i)
				}
				y := pred.Value(i)
				if y < 0 || int(y) >= m || l < Unlabeled || int(l) >= m {
					return fmt.Errorf("row %d: class index out of range 0..%d", len(p.Predicted), m-1)
				}
				p.Labels, p.Predicted = append(p.Labels, l), append(p.Predicted, y)
				off := (sc.Data().Offset() + i) * m
				p.Scores = append(p.Scores, vals.Float32Values()[off:off+m]...)
			}
			if ids, ok := col(rec, "id").(*array.String); ok {
				for i := 0; i < n; i++ {
					p.IDs = append(p.IDs, strings.Clone(ids.Value(i)))
				}
			}
		}
		return r.Err()
	})
	if err != nil {
		return fail("%v", err)
	}
	if len(p.Predicted) == 0 {
		return fail("no predictions")
	}
	return p, nil
}
