package features

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

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

// WritePredictions writes p to path atomically.
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
