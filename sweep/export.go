package sweep

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Formats lists the export formats.
var Formats = []string{"csv", "json", "parquet", "ipynb", "png", "svg"}

// ExportOptions say how Export renders results.
type ExportOptions struct {
	// Summary writes the summary (csv and json only) instead of the rows.
	Summary bool
	// Results is the results file as the notebook loads it (relative to
	// the notebook); Version is recorded in the notebook.
	Results, Version string
	// Plot tunes png and svg.
	Plot PlotOptions
}

// Export renders rows in one of Formats: the rows or their summary as
// CSV or JSON, the rows as Parquet, a notebook, or the summary's plot.
func Export(w io.Writer, format string, rows []Row, o ExportOptions) error {
	if o.Summary && format != "csv" && format != "json" {
		return fmt.Errorf("the summary is exported as csv or json, not %s", format)
	}
	switch format {
	case "csv":
		if o.Summary {
			return SummaryCSV(w, Summarize(rows))
		}
		return WriteCSV(w, rows)
	case "json":
		if o.Summary {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(Summarize(rows))
		}
		return WriteJSON(w, rows)
	case "parquet":
		return WriteParquet(w, rows)
	case "ipynb":
		return WriteNotebook(w, o.Results, o.Version)
	case "png", "svg":
		return WritePlot(w, format, Summarize(rows), o.Plot)
	}
	return fmt.Errorf("unknown export format %q (one of %v)", format, Formats)
}

// cells returns each row's values as text for CSV: numbers in full
// precision, +Inf as inf, nulls empty (pandas, polars and DuckDB read them
// as missing).
func cells(rows []Row) (header []string, out [][]string) {
	rec := Record(rows)
	defer rec.Release()
	for _, c := range columns {
		header = append(header, c.name)
	}
	out = make([][]string, len(rows))
	for i := range rows {
		out[i] = make([]string, len(columns))
		for c := range columns {
			a := rec.Column(c)
			if a.IsNull(i) {
				continue
			}
			switch a := a.(type) {
			case *array.String:
				out[i][c] = a.Value(i)
			case *array.Boolean:
				out[i][c] = strconv.FormatBool(a.Value(i))
			case *array.Int64:
				out[i][c] = strconv.FormatInt(a.Value(i), 10)
			case *array.Float64:
				out[i][c] = formatFloat(a.Value(i))
			}
		}
	}
	return header, out
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// WriteCSV writes the rows as CSV with a header line.
func WriteCSV(w io.Writer, rows []Row) error {
	header, out := cells(rows)
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(out); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the rows as a JSON array of objects, one per job.
// JSON has no infinity: the references' ε (+Inf) is written as null, and
// their private field is false.
func WriteJSON(w io.Writer, rows []Row) error {
	rec := Record(rows)
	defer rec.Release()
	objs := make([]map[string]any, len(rows))
	for i := range rows {
		o := map[string]any{}
		for c, col := range columns {
			a := rec.Column(c)
			if a.IsNull(i) {
				o[col.name] = nil
				continue
			}
			switch a := a.(type) {
			case *array.String:
				o[col.name] = a.Value(i)
			case *array.Boolean:
				o[col.name] = a.Value(i)
			case *array.Int64:
				o[col.name] = a.Value(i)
			case *array.Float64:
				if v := a.Value(i); math.IsInf(v, 0) || math.IsNaN(v) {
					o[col.name] = nil
				} else {
					o[col.name] = v
				}
			}
		}
		objs[i] = o
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(ordered{objs})
}

// ordered encodes objects with keys in column order (maps would sort them).
type ordered struct{ objs []map[string]any }

func (o ordered) MarshalJSON() ([]byte, error) {
	buf := []byte("[")
	for i, obj := range o.objs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '{')
		for c, col := range columns {
			if c > 0 {
				buf = append(buf, ',')
			}
			k, _ := json.Marshal(col.name)
			v, err := json.Marshal(obj[col.name])
			if err != nil {
				return nil, err
			}
			buf = append(append(append(buf, k...), ':'), v...)
		}
		buf = append(buf, '}')
	}
	return append(buf, ']'), nil
}

// WriteParquet writes the rows as a Parquet file (zstd), with the results'
// Arrow schema.
func WriteParquet(w io.Writer, rows []Row) error {
	rec := Record(rows)
	defer rec.Release()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	if err := pqarrow.WriteTable(tbl, w, 64*1024, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}
