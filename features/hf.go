package features

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// hfDataset reads Hugging Face datasets files: Arrow IPC streams (what
// save_to_disk writes) or Parquet (the Hub's storage format), with an image
// column struct<bytes: binary, path: string> and an integer label column
// whose class names come from the ClassLabel feature in the "huggingface"
// metadata. Several files (shards) are read in order.
type hfDataset struct {
	files   []string
	src     string
	classes []string

	fi       int
	r        *records
	rec      arrow.RecordBatch
	row      int
	imgCol   int
	labelCol int
	next     int64
	peeked   *Example
}

// hfFeatures is the part of the "huggingface" metadata dpfeat reads.
type hfFeatures struct {
	Info struct {
		Features map[string]struct {
			Type  string   `json:"_type"`
			Names []string `json:"names"`
		} `json:"features"`
	} `json:"info"`
}

func openHF(files []string, src string) (Dataset, error) {
	d := &hfDataset{files: files, src: src, classes: nil}
	if err := d.openFile(0); err != nil {
		return nil, err
	}
	// Read the first example now, so that an empty dataset is an error at
	// open time and Len can stay unknown.
	ex, err := d.Next()
	if errors.Is(err, io.EOF) {
		d.Close()
		return nil, fmt.Errorf("open dataset %s: no examples", src)
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	d.peeked = &ex
	return d, nil
}

// isParquet reports whether a shard is Parquet (by its name).
func isParquet(path string) bool {
	return strings.EqualFold(filepath.Ext(path), ".parquet")
}

// openFile opens shard i and locates its columns; all shards must agree on
// the class names.
func (d *hfDataset) openFile(i int) error {
	path := d.files[i]
	format := FormatArrowStream
	if isParquet(path) {
		format = FormatParquet
	}
	r, err := openRecords(path, format)
	if err != nil {
		if format == FormatArrowStream {
			return fmt.Errorf("%w (the Hugging Face datasets format is an Arrow IPC stream)", err)
		}
		return err
	}
	return d.useShard(i, r)
}

// useShard locates the columns of shard i, read through r.
func (d *hfDataset) useShard(i int, r *records) error {
	path := d.files[i]
	fail := func(err error) error {
		r.Close()
		return fmt.Errorf("read %s: %w", path, err)
	}
	img, lab, classes, err := hfColumns(r.Schema())
	if err != nil {
		return fail(err)
	}
	if i == 0 {
		d.classes = classes
	} else if !slices.Equal(classes, d.classes) {
		return fail(fmt.Errorf("its class names differ from those of %s", d.files[0]))
	}
	d.fi, d.r, d.imgCol, d.labelCol, d.row = i, r, img, lab, 0
	return nil
}

func hfColumns(s *arrow.Schema) (img, lab int, classes []string, err error) {
	var meta hfFeatures
	if i := s.Metadata().FindKey("huggingface"); i >= 0 {
		if err := json.Unmarshal([]byte(s.Metadata().Values()[i]), &meta); err != nil {
			return 0, 0, nil, fmt.Errorf("schema metadata \"huggingface\" is not valid JSON: %v", err)
		}
	}
	img, lab = -1, -1
	for i, f := range s.Fields() {
		hf := meta.Info.Features[f.Name]
		if img < 0 && (hf.Type == "Image" || (hf.Type == "" && (f.Name == "image" || f.Name == "img"))) {
			img = i
		}
		if lab < 0 && (hf.Type == "ClassLabel" || (hf.Type == "" && (f.Name == "label" || f.Name == "labels"))) {
			lab = i
			classes = hf.Names
		}
	}
	if img < 0 {
		return 0, 0, nil, fmt.Errorf("no image column (columns: %s); expected an Image feature or a column named image", columnNames(s))
	}
	st, ok := s.Field(img).Type.(*arrow.StructType)
	if !ok {
		return 0, 0, nil, fmt.Errorf("image column %q has type %s; expected struct<bytes: binary, path: string>", s.Field(img).Name, s.Field(img).Type)
	}
	if i, ok := st.FieldIdx("bytes"); !ok || (st.Field(i).Type.ID() != arrow.BINARY && st.Field(i).Type.ID() != arrow.LARGE_BINARY) {
		return 0, 0, nil, fmt.Errorf("image column %q has type %s; expected struct<bytes: binary, path: string>", s.Field(img).Name, st)
	}
	if lab >= 0 {
		switch s.Field(lab).Type.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		default:
			return 0, 0, nil, fmt.Errorf("label column %q has type %s; expected an integer ClassLabel", s.Field(lab).Name, s.Field(lab).Type)
		}
		if len(classes) == 0 {
			return 0, 0, nil, fmt.Errorf("label column %q has no class names; expected a ClassLabel with names in the \"huggingface\" schema metadata", s.Field(lab).Name)
		}
	}
	return img, lab, classes, nil
}

func (d *hfDataset) Classes() []string { return d.classes }
func (d *hfDataset) Len() int64        { return -1 }
func (d *hfDataset) Source() string {
	if isParquet(d.files[0]) {
		return "Hugging Face Parquet " + d.src
	}
	return "Hugging Face Arrow " + d.src
}

func (d *hfDataset) Close() error {
	if d.rec != nil {
		d.rec.Release()
		d.rec = nil
	}
	if d.r != nil {
		d.r.Close()
		d.r = nil
	}
	return nil
}

func (d *hfDataset) Next() (Example, error) {
	if d.peeked != nil {
		ex := *d.peeked
		d.peeked = nil
		return ex, nil
	}
	for d.rec == nil || d.row >= int(d.rec.NumRows()) {
		if d.rec != nil {
			d.rec.Release()
			d.rec = nil
		}
		var ok bool
		if err := guard(func() error { ok = d.r.Next(); return d.r.Err() }); err != nil {
			return Example{}, fmt.Errorf("read %s: corrupt record batch: %v", d.files[d.fi], err)
		}
		if ok {
			d.rec = d.r.RecordBatch()
			d.rec.Retain()
			d.row = 0
			continue
		}
		if d.fi+1 >= len(d.files) {
			return Example{}, io.EOF
		}
		d.Close()
		if err := d.openFile(d.fi + 1); err != nil {
			return Example{}, err
		}
	}
	path := d.files[d.fi]
	i := d.row
	d.row++
	ex := Example{Label: Unlabeled, Index: d.next, Position: ExampleID(fmt.Sprintf("%s#%d", filepath.Base(path), d.next))}
	var err error
	if gerr := guard(func() error { err = d.fill(&ex, i); return nil }); gerr != nil {
		return Example{}, fmt.Errorf("read %s: row %d: corrupt data: %v", path, d.next, gerr)
	}
	if err != nil {
		return Example{}, fmt.Errorf("read %s: row %d: %w", path, d.next, err)
	}
	d.next++
	return ex, nil
}

func (d *hfDataset) fill(ex *Example, i int) error {
	img := d.rec.Column(d.imgCol).(*array.Struct)
	if img.IsNull(i) {
		return fmt.Errorf("image is null")
	}
	st := img.DataType().(*arrow.StructType)
	bi, _ := st.FieldIdx("bytes")
	switch b := img.Field(bi).(type) {
	case *array.Binary:
		if b.IsValid(i) {
			ex.Encoded = append([]byte(nil), b.Value(i)...)
		}
	case *array.LargeBinary:
		if b.IsValid(i) {
			ex.Encoded = append([]byte(nil), b.Value(i)...)
		}
	}
	if pi, ok := st.FieldIdx("path"); ok {
		if p, ok := img.Field(pi).(*array.String); ok && p.IsValid(i) && p.Value(i) != "" {
			ex.ID, ex.Position = ExampleID(p.Value(i)), p.Value(i)
		}
	}
	if ex.Encoded == nil {
		return fmt.Errorf("the image has no bytes; dpfeat reads images embedded in the Arrow file (save the dataset with embedded images)")
	}
	if d.labelCol >= 0 {
		col := d.rec.Column(d.labelCol)
		if col.IsNull(i) {
			return nil
		}
		var v int64
		switch c := col.(type) {
		case *array.Int64:
			v = c.Value(i)
		case *array.Int32:
			v = int64(c.Value(i))
		case *array.Int16:
			v = int64(c.Value(i))
		case *array.Int8:
			v = int64(c.Value(i))
		case *array.Uint8:
			v = int64(c.Value(i))
		case *array.Uint16:
			v = int64(c.Value(i))
		case *array.Uint32:
			v = int64(c.Value(i))
		}
		switch {
		case v == -1: // datasets' convention for unlabeled (e.g. test splits)
		case v < 0 || v >= int64(len(d.classes)):
			return fmt.Errorf("label %d out of range; expected 0..%d or -1", v, len(d.classes)-1)
		default:
			ex.Label = int32(v)
		}
	}
	return nil
}
