package features

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// columnPlan says which columns of an Arrow schema (an Arrow or Parquet
// file from another writer) hold the features, the label and the id. It is
// decided from the schema alone, never from the values.
type columnPlan struct {
	features []int // one list column, or one column per dimension
	list     bool
	dim      int // 0 until the first row of a variable-size list column
	label    int // -1: none
	id       int // -1: none
	kind     labelKind
	names    []string
	meta     Metadata
}

func isNumeric(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64,
		arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

// listElem returns the element type of a list column, or nil.
func listElem(t arrow.DataType) arrow.DataType {
	switch lt := t.(type) {
	case *arrow.FixedSizeListType:
		return lt.Elem()
	case *arrow.ListType:
		return lt.Elem()
	case *arrow.LargeListType:
		return lt.Elem()
	}
	return nil
}

func labelKindOf(t arrow.DataType) (labelKind, bool) {
	if d, ok := t.(*arrow.DictionaryType); ok {
		t = d.ValueType
	}
	switch {
	case isNumeric(t):
		return intLabels, true
	case t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING || t.ID() == arrow.BOOL:
		return stringLabels, true
	}
	return noLabels, false
}

// planColumns chooses the columns of schema s (see ImportOptions).
func planColumns(s *arrow.Schema, opt ImportOptions) (*columnPlan, error) {
	p := &columnPlan{label: -1, id: -1}
	for _, f := range s.Fields() {
		p.names = append(p.names, f.Name)
	}
	if err := uniqueColumns(p.names); err != nil {
		return nil, err
	}
	md := s.Metadata()
	var err error
	if p.meta, err = parseMetadata(md); err != nil {
		return nil, err
	}
	if p.meta.Views != nil {
		return nil, fmt.Errorf("a multi-view file (%s) is read only in dpfeat's own Arrow format, which keeps each row's example", MetaViews)
	}
	// Another writer's keys (pandas', Hugging Face's) describe columns
	// the feature file does not have.
	for k := range p.meta.Extra {
		if !strings.HasPrefix(k, "dpfeat.") {
			delete(p.meta.Extra, k)
		}
	}
	if p.label, err = labelColumn(p.names, opt.LabelColumn); err != nil {
		return nil, err
	}
	if p.id, err = idColumn(p.names, opt.IDColumn); err != nil {
		return nil, err
	}
	if p.label >= 0 {
		f := s.Field(p.label)
		var ok bool
		if p.kind, ok = labelKindOf(f.Type); !ok {
			return nil, fmt.Errorf("label column %q has type %s; expected integers or strings", f.Name, f.Type)
		}
		if len(p.meta.Classes) == 0 {
			if p.meta.Classes, err = hfClassNames(md, f.Name); err != nil {
				return nil, err
			}
		}
	}
	if p.id >= 0 {
		if t := s.Field(p.id).Type; t.ID() != arrow.STRING && t.ID() != arrow.LARGE_STRING && !isNumeric(t) {
			return nil, fmt.Errorf("id column %q has type %s; expected strings or integers", s.Field(p.id).Name, t)
		}
	}
	used := func(i int) bool { return i == p.label || i == p.id }
	if opt.FeaturesColumn != "" {
		i, err := pickColumn(p.names, opt.FeaturesColumn, "--features-column", "column")
		if err != nil {
			return nil, err
		}
		p.features = []int{i}
	} else {
		for i, f := range s.Fields() {
			if !used(i) && listElem(f.Type) != nil {
				p.features = append(p.features, i)
			}
		}
		if len(p.features) > 1 {
			var names []string
			for _, i := range p.features {
				names = append(names, strconv.Quote(p.names[i]))
			}
			return nil, fmt.Errorf("several list columns could hold the features (%s); name one with --features-column", strings.Join(names, ", "))
		}
	}
	if len(p.features) == 1 {
		f := s.Field(p.features[0])
		elem := listElem(f.Type)
		switch {
		case elem != nil && isNumeric(elem):
			p.list = true
			if fl, ok := f.Type.(*arrow.FixedSizeListType); ok {
				p.dim = int(fl.Len())
			}
		case elem == nil && isNumeric(f.Type):
		default:
			return nil, fmt.Errorf("features column %q has type %s; expected a list of numbers (or numeric columns, one per dimension)", f.Name, f.Type)
		}
	} else {
		for i, f := range s.Fields() {
			if used(i) || strings.HasPrefix(f.Name, "__index_level_") {
				continue
			}
			if !isNumeric(f.Type) {
				return nil, fmt.Errorf("column %q (%s) is neither numeric features, the label nor the id; choose columns with --features-column, --label-column, --id-column", f.Name, f.Type)
			}
			p.features = append(p.features, i)
		}
		if len(p.features) == 0 {
			return nil, fmt.Errorf("no features column: expected a list column of numbers, or numeric columns (columns: %s)", strings.Join(p.names, ", "))
		}
		p.dim = len(p.features)
	}
	if p.list {
		// Other columns are not read: say so rather than drop them quietly.
		for i, f := range s.Fields() {
			if i != p.features[0] && !used(i) && !strings.HasPrefix(f.Name, "__index_level_") {
				return nil, fmt.Errorf("column %q is neither the features (%q), the label nor the id; name the columns with --label-column or --id-column, or drop it", f.Name, p.names[p.features[0]])
			}
		}
	}
	return p, nil
}

// hfClassNames returns the ClassLabel names of column col from Hugging
// Face metadata, nil when there are none.
func hfClassNames(md arrow.Metadata, col string) ([]string, error) {
	i := md.FindKey("huggingface")
	if i < 0 {
		return nil, nil
	}
	var meta hfFeatures
	if err := json.Unmarshal([]byte(md.Values()[i]), &meta); err != nil {
		return nil, fmt.Errorf("schema metadata \"huggingface\" is not valid JSON: %v", err)
	}
	if f, ok := meta.Info.Features[col]; ok && f.Type == "ClassLabel" && len(f.Names) > 0 {
		return f.Names, nil
	}
	return nil, nil
}

func (p *columnPlan) describe() string {
	var feats []string
	for _, i := range p.features {
		feats = append(feats, p.names[i])
	}
	label, id := "", ""
	if p.label >= 0 {
		label = p.names[p.label]
	}
	if p.id >= 0 {
		id = p.names[p.id]
	}
	return describeColumns(feats, label, id)
}

// guardedBatch is batch with a damaged record's panic (offsets past its
// buffers) turned into an error naming the rows.
func (p *columnPlan) guardedBatch(rec arrow.RecordBatch, row int64) (b *rawBatch, err error) {
	if gerr := guard(func() error { b, err = p.batch(rec, row); return nil }); gerr != nil {
		return nil, fmt.Errorf("rows from %d: corrupt data: %v", row, gerr)
	}
	return b, err
}

// batch converts one record, whose first row is row of the file.
func (p *columnPlan) batch(rec arrow.RecordBatch, row int64) (*rawBatch, error) {
	n := int(rec.NumRows())
	if p.dim == 0 && n > 0 {
		// A variable-size list: the first row sets the dimension.
		col := rec.Column(p.features[0])
		if col.IsNull(0) {
			return nil, fmt.Errorf("row %d: features are null", row)
		}
		start, end := listBounds(col, 0)
		if end-start < 1 {
			return nil, fmt.Errorf("row %d: no features", row)
		}
		p.dim = end - start
	}
	if p.list {
		// Every row must hold dim values, and n rows of dim values need
		// n·dim values in the list's child — both before n·dim floats are
		// allocated: a damaged offset once claimed a row of 5·10⁹ values
		// (the child's length is checked against the bytes present).
		col := rec.Column(p.features[0])
		for i := 0; i < n; i++ {
			if s, e := listBounds(col, i); !col.IsNull(i) && e-s != p.dim {
				return nil, fmt.Errorf("row %d: column %q holds %d numbers; the rows before hold %d", row+int64(i), p.names[p.features[0]], e-s, p.dim)
			}
		}
		if have := listChildLen(col); int64(n)*int64(p.dim) > int64(have) {
			return nil, fmt.Errorf("rows from %d: %d rows of %d features need %d values; the column holds %d", row, n, p.dim, int64(n)*int64(p.dim), have)
		}
	}
	b := &rawBatch{dim: p.dim, features: make([]float32, n*p.dim), labels: make([]string, n)}
	if p.list {
		if err := listValues(rec.Column(p.features[0]), p.dim, b.features, row, p.names[p.features[0]]); err != nil {
			return nil, err
		}
	} else {
		for j, c := range p.features {
			col := rec.Column(c)
			for i := 0; i < n; i++ {
				if col.IsNull(i) {
					return nil, fmt.Errorf("row %d: column %q is null; expected a number", row+int64(i), p.names[c])
				}
				v, err := float32Of(numberAt(col, i), row+int64(i), j)
				if err != nil {
					return nil, err
				}
				b.features[i*p.dim+j] = v
			}
		}
	}
	if p.label >= 0 {
		col := rec.Column(p.label)
		for i := 0; i < n; i++ {
			l, null, err := labelAt(col, i)
			if err != nil {
				return nil, fmt.Errorf("row %d: %v", row+int64(i), err)
			}
			if null {
				if b.null == nil {
					b.null = make([]bool, n)
				}
				b.null[i] = true
			}
			b.labels[i] = l
		}
	}
	if p.id >= 0 {
		col := rec.Column(p.id)
		b.ids = make([]string, n)
		for i := 0; i < n; i++ {
			if col.IsNull(i) {
				continue
			}
			switch c := col.(type) {
			case *array.String:
				b.ids[i] = strings.Clone(c.Value(i))
			case *array.LargeString:
				b.ids[i] = strings.Clone(c.Value(i))
			default:
				b.ids[i] = strconv.FormatInt(int64(numberAt(col, i)), 10)
			}
		}
	}
	return b, nil
}

// listBounds returns the value range of list row i.
func listBounds(col arrow.Array, i int) (int, int) {
	switch c := col.(type) {
	case *array.FixedSizeList:
		w := int(c.DataType().(*arrow.FixedSizeListType).Len())
		off := c.Data().Offset() + i
		return off * w, (off + 1) * w
	case *array.List:
		s, e := c.ValueOffsets(i)
		return int(s), int(e)
	case *array.LargeList:
		s, e := c.ValueOffsets(i)
		return int(s), int(e)
	}
	return 0, 0
}

// listChildLen is the number of values a list column's child holds.
func listChildLen(col arrow.Array) int {
	switch c := col.(type) {
	case *array.FixedSizeList:
		return c.ListValues().Len()
	case *array.List:
		return c.ListValues().Len()
	case *array.LargeList:
		return c.ListValues().Len()
	}
	return 0
}

// listValues copies a list column of rows of dim numbers into dst (every
// row's length checked by batch).
func listValues(col arrow.Array, dim int, dst []float32, row int64, name string) error {
	var vals arrow.Array
	switch c := col.(type) {
	case *array.FixedSizeList:
		vals = c.ListValues()
	case *array.List:
		vals = c.ListValues()
	case *array.LargeList:
		vals = c.ListValues()
	}
	f32, fast := vals.(*array.Float32)
	for i := 0; i < col.Len(); i++ {
		if col.IsNull(i) {
			return fmt.Errorf("row %d: column %q is null; expected %d numbers", row+int64(i), name, dim)
		}
		s, e := listBounds(col, i) // e − s = dim: checked by batch
		out := dst[i*dim : (i+1)*dim]
		if vals.NullN() > 0 {
			for k := s; k < e; k++ {
				if vals.IsNull(k) {
					return fmt.Errorf("row %d: column %q, value %d is null; expected a number", row+int64(i), name, k-s)
				}
			}
		}
		if fast {
			copy(out, f32.Float32Values()[s:e])
			continue
		}
		for k := s; k < e; k++ {
			v, err := float32Of(numberAt(vals, k), row+int64(i), k-s)
			if err != nil {
				return err
			}
			out[k-s] = v
		}
	}
	return nil
}

// numberAt returns numeric value i of col as a float64.
func numberAt(col arrow.Array, i int) float64 {
	switch c := col.(type) {
	case *array.Float16:
		return float64(c.Value(i).Float32())
	case *array.Float32:
		return float64(c.Value(i))
	case *array.Float64:
		return c.Value(i)
	case *array.Int8:
		return float64(c.Value(i))
	case *array.Int16:
		return float64(c.Value(i))
	case *array.Int32:
		return float64(c.Value(i))
	case *array.Int64:
		return float64(c.Value(i))
	case *array.Uint8:
		return float64(c.Value(i))
	case *array.Uint16:
		return float64(c.Value(i))
	case *array.Uint32:
		return float64(c.Value(i))
	case *array.Uint64:
		return float64(c.Value(i))
	}
	panic(fmt.Sprintf("features: numberAt on %T", col))
}

// labelAt returns label i of col in the source's label form.
func labelAt(col arrow.Array, i int) (string, bool, error) {
	if col.IsNull(i) {
		return "", true, nil
	}
	switch c := col.(type) {
	case *array.Dictionary:
		return labelAt(c.Dictionary(), c.GetValueIndex(i))
	case *array.String:
		return strings.Clone(c.Value(i)), false, nil
	case *array.LargeString:
		return strings.Clone(c.Value(i)), false, nil
	case *array.Boolean:
		return strconv.FormatBool(c.Value(i)), false, nil
	case *array.Int64:
		return strconv.FormatInt(c.Value(i), 10), false, nil
	case *array.Uint64:
		return strconv.FormatUint(c.Value(i), 10), false, nil
	case *array.Float16, *array.Float32, *array.Float64:
		v := numberAt(col, i)
		if math.IsNaN(v) {
			return "", true, nil // pandas writes a missing label as NaN
		}
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return "", false, fmt.Errorf("the label is not an integer")
		}
		return strconv.FormatInt(int64(v), 10), false, nil
	}
	return strconv.FormatInt(int64(numberAt(col, i)), 10), false, nil
}

// tableSource reads an Arrow IPC file or stream, or a Parquet file, from
// another writer, through its column plan.
type tableSource struct {
	path, format string
	r            *records
	row          int64
	plan         *columnPlan
	pending      *rawBatch
}

func openTableSource(path, format string, opt ImportOptions) (source, error) {
	s := &tableSource{path: path, format: format}
	if err := s.reset(); err != nil {
		return nil, err
	}
	plan, err := planColumns(s.r.Schema(), opt)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	s.plan = plan
	// The first block fixes a variable-size list's dimension.
	if s.pending, err = s.next(); err != nil && !errors.Is(err, io.EOF) {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *tableSource) reset() error {
	s.close()
	r, err := openRecords(s.path, s.format)
	if err != nil {
		return err
	}
	s.r, s.row, s.pending = r, 0, nil
	return nil
}

func (s *tableSource) next() (*rawBatch, error) {
	if p := s.pending; p != nil {
		s.pending = nil
		return p, nil
	}
	for {
		var ok bool
		if err := guard(func() error { ok = s.r.Next(); return s.r.Err() }); err != nil {
			return nil, fmt.Errorf("read %s: at row %d: %v", s.path, s.row, err)
		}
		if !ok {
			return nil, io.EOF
		}
		rec := s.r.RecordBatch()
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

func (s *tableSource) dim() int        { return s.plan.dim }
func (s *tableSource) kind() labelKind { return s.plan.kind }
func (s *tableSource) meta() Metadata  { return s.plan.meta }
func (s *tableSource) hasIDs() bool    { return s.plan.id >= 0 }
func (s *tableSource) columns() string { return s.plan.describe() }

func (s *tableSource) close() error {
	if s.r != nil {
		s.r.Close()
		s.r = nil
	}
	return nil
}
