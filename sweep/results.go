package sweep

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dpfeat/dpfeat/internal/atomicfile"
)

// Row is one job's result: a row of RESULTS.arrow.
type Row struct {
	Job        string  `json:"job"`
	Dataset    string  `json:"dataset"`
	Train      string  `json:"train_file"`
	Test       string  `json:"test_file"`
	Imbalanced bool    `json:"imbalanced"`
	Method     string  `json:"method"`
	Private    bool    `json:"private"`
	Epsilon    float64 `json:"epsilon"` // the target; +Inf for the references
	Delta      float64 `json:"delta"`
	Seed       int64   `json:"seed"`
	Setting    string  `json:"setting"`
	// Hyperparameters holds every setting used, defaults included (JSON).
	Hyperparameters string   `json:"hyperparameters"`
	EpsilonSpent    *float64 `json:"epsilon_spent"`
	Mu              *float64 `json:"mu"`
	Rho             *float64 `json:"rho"`
	Accountant      string   `json:"accountant"`
	NoiseMultiplier float64  `json:"noise_multiplier"`
	Privacy         string   `json:"privacy"`
	Seeded          bool     `json:"seeded"`
	// Tuning says how hyperparameters were chosen and whether that was
	// accounted.
	Tuning       string   `json:"tuning"`
	ValAccuracy  *float64 `json:"val_accuracy"`
	ValBalanced  *float64 `json:"val_balanced_accuracy"`
	TestAccuracy *float64 `json:"test_accuracy"`
	TestBalanced *float64 `json:"test_balanced_accuracy"`
	// TestMinority is the accuracy on the rarest quarter of the classes
	// as an imbalanced training file's public profile ranks them (nil for
	// other files: private class counts are not used).
	TestMinority *float64 `json:"test_minority_accuracy"`
	TrainRows    int64    `json:"train_rows"`
	// Seconds is the job's wall time; 0 for a private selection, whose
	// time grows with its number of runs, which is not released.
	Seconds  float64 `json:"seconds"`
	Error    string  `json:"error"`
	Backend  string  `json:"backend"`
	Version  string  `json:"dpfeat_version"`
	Finished string  `json:"finished"`
	// NoiseSeed is a seeded sweep's noise seed for the job, in decimal:
	// `dpfeat fit --seed NoiseSeed` with the job's settings reproduces it
	// ("" for secure noise and for private selections).
	NoiseSeed string `json:"noise_seed"`
	// Classifier is where the job's classifier was written (sweep
	// --classifiers DIR), or "".
	Classifier string `json:"classifier"`
}

// column maps a Row field to an Arrow column.
type column struct {
	name string
	typ  arrow.DataType
	put  func(b array.Builder, r *Row)
	get  func(a arrow.Array, i int, r *Row)
	// later marks a column added after the first results format: a file
	// written before it reads as the zero value.
	later bool
}

// later marks a column as added after the first results format.
func later(c column) column {
	c.later = true
	return c
}

func strCol(name string, f func(r *Row) *string) column {
	return column{name, arrow.BinaryTypes.String,
		func(b array.Builder, r *Row) { b.(*array.StringBuilder).Append(*f(r)) },
		func(a arrow.Array, i int, r *Row) { *f(r) = a.(*array.String).Value(i) }, false}
}

func boolCol(name string, f func(r *Row) *bool) column {
	return column{name, arrow.FixedWidthTypes.Boolean,
		func(b array.Builder, r *Row) { b.(*array.BooleanBuilder).Append(*f(r)) },
		func(a arrow.Array, i int, r *Row) { *f(r) = a.(*array.Boolean).Value(i) }, false}
}

func intCol(name string, f func(r *Row) *int64) column {
	return column{name, arrow.PrimitiveTypes.Int64,
		func(b array.Builder, r *Row) { b.(*array.Int64Builder).Append(*f(r)) },
		func(a arrow.Array, i int, r *Row) { *f(r) = a.(*array.Int64).Value(i) }, false}
}

func floatCol(name string, f func(r *Row) *float64) column {
	return column{name, arrow.PrimitiveTypes.Float64,
		func(b array.Builder, r *Row) { b.(*array.Float64Builder).Append(*f(r)) },
		func(a arrow.Array, i int, r *Row) { *f(r) = a.(*array.Float64).Value(i) }, false}
}

// optCol is a nullable float64 column.
func optCol(name string, f func(r *Row) **float64) column {
	return column{name, arrow.PrimitiveTypes.Float64,
		func(b array.Builder, r *Row) {
			if v := *f(r); v != nil {
				b.(*array.Float64Builder).Append(*v)
			} else {
				b.AppendNull()
			}
		},
		func(a arrow.Array, i int, r *Row) {
			if a.IsNull(i) {
				*f(r) = nil
				return
			}
			v := a.(*array.Float64).Value(i)
			*f(r) = &v
		}, false}
}

var columns = []column{
	strCol("job", func(r *Row) *string { return &r.Job }),
	strCol("dataset", func(r *Row) *string { return &r.Dataset }),
	strCol("train_file", func(r *Row) *string { return &r.Train }),
	strCol("test_file", func(r *Row) *string { return &r.Test }),
	boolCol("imbalanced", func(r *Row) *bool { return &r.Imbalanced }),
	strCol("method", func(r *Row) *string { return &r.Method }),
	boolCol("private", func(r *Row) *bool { return &r.Private }),
	floatCol("epsilon", func(r *Row) *float64 { return &r.Epsilon }),
	floatCol("delta", func(r *Row) *float64 { return &r.Delta }),
	intCol("seed", func(r *Row) *int64 { return &r.Seed }),
	strCol("setting", func(r *Row) *string { return &r.Setting }),
	strCol("hyperparameters", func(r *Row) *string { return &r.Hyperparameters }),
	optCol("epsilon_spent", func(r *Row) **float64 { return &r.EpsilonSpent }),
	optCol("mu", func(r *Row) **float64 { return &r.Mu }),
	optCol("rho", func(r *Row) **float64 { return &r.Rho }),
	strCol("accountant", func(r *Row) *string { return &r.Accountant }),
	floatCol("noise_multiplier", func(r *Row) *float64 { return &r.NoiseMultiplier }),
	strCol("privacy", func(r *Row) *string { return &r.Privacy }),
	boolCol("seeded", func(r *Row) *bool { return &r.Seeded }),
	strCol("tuning", func(r *Row) *string { return &r.Tuning }),
	optCol("val_accuracy", func(r *Row) **float64 { return &r.ValAccuracy }),
	optCol("val_balanced_accuracy", func(r *Row) **float64 { return &r.ValBalanced }),
	optCol("test_accuracy", func(r *Row) **float64 { return &r.TestAccuracy }),
	optCol("test_balanced_accuracy", func(r *Row) **float64 { return &r.TestBalanced }),
	optCol("test_minority_accuracy", func(r *Row) **float64 { return &r.TestMinority }),
	intCol("train_rows", func(r *Row) *int64 { return &r.TrainRows }),
	floatCol("seconds", func(r *Row) *float64 { return &r.Seconds }),
	strCol("error", func(r *Row) *string { return &r.Error }),
	strCol("backend", func(r *Row) *string { return &r.Backend }),
	strCol("dpfeat_version", func(r *Row) *string { return &r.Version }),
	strCol("finished", func(r *Row) *string { return &r.Finished }),
	later(strCol("noise_seed", func(r *Row) *string { return &r.NoiseSeed })),
	later(strCol("classifier", func(r *Row) *string { return &r.Classifier })),
}

// Schema is the results file's Arrow schema.
func Schema() *arrow.Schema {
	fields := make([]arrow.Field, len(columns))
	for i, c := range columns {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: c.typ == arrow.PrimitiveTypes.Float64}
	}
	md := arrow.NewMetadata([]string{"dpfeat.results"}, []string{"1"})
	return arrow.NewSchema(fields, &md)
}

// Record builds one Arrow record batch of the rows.
func Record(rows []Row) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, Schema())
	defer b.Release()
	for i := range rows {
		for c, col := range columns {
			col.put(b.Field(c), &rows[i])
		}
	}
	return b.NewRecordBatch()
}

// WriteResults writes rows as an Arrow IPC file, atomically (a temporary
// file renamed over path).
func WriteResults(path string, rows []Row) error {
	rec := Record(rows)
	defer rec.Release()
	return atomicfile.Write(path, func(f io.Writer) error {
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()))
		if err != nil {
			return err
		}
		if err := w.Write(rec); err != nil {
			return err
		}
		return w.Close()
	})
}

// ReadResults reads a results file written by WriteResults.
func ReadResults(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: not an Arrow IPC file: %w", path, err)
	}
	defer r.Close()
	sch := r.Schema()
	if v, ok := sch.Metadata().GetValue("dpfeat.results"); !ok || v != "1" {
		return nil, fmt.Errorf("read %s: not a dpfeat results file (no dpfeat.results metadata; make one with dpfeat sweep)", path)
	}
	idx := make([]int, len(columns))
	for c, col := range columns {
		is := sch.FieldIndices(col.name)
		if len(is) == 0 && col.later {
			idx[c] = -1
			continue
		}
		if len(is) != 1 || !arrow.TypeEqual(sch.Field(is[0]).Type, col.typ) {
			return nil, fmt.Errorf("read %s: column %q missing or not %s", path, col.name, col.typ)
		}
		idx[c] = is[0]
	}
	var rows []Row
	for k := 0; k < r.NumRecords(); k++ {
		rec, err := r.RecordBatchAt(k)
		if err != nil {
			return nil, fmt.Errorf("read %s: record batch %d: %w", path, k, err)
		}
		start := len(rows)
		rows = append(rows, make([]Row, rec.NumRows())...)
		for c, col := range columns {
			if idx[c] < 0 {
				continue
			}
			a := rec.Column(idx[c])
			for i := 0; i < int(rec.NumRows()); i++ {
				if a.IsNull(i) && col.typ != arrow.PrimitiveTypes.Float64 {
					return nil, fmt.Errorf("read %s: row %d: %s is null", path, start+i, col.name)
				}
				col.get(a, i, &rows[start+i])
			}
		}
		rec.Release()
	}
	return rows, nil
}

// journal is the sweep's durable progress: one JSON line per finished
// job, synced, so that an interrupted sweep resumes where it stopped.
type journal struct {
	f *os.File
}

// jsonRow is a Row for the journal: JSON has no infinity.
type jsonRow struct {
	Row
	EpsilonText string `json:"epsilon_text"`
}

func openJournal(path string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666) // less the umask
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &journal{f: f}, nil
}

func (j *journal) add(r Row) error {
	b, err := EncodeRow(r)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", j.f.Name(), err)
	}
	return j.f.Sync()
}

func (j *journal) close() error { return j.f.Close() }

// readJournal returns the rows of a journal; a last line cut short by a
// crash is reported in torn (that job runs again), any other bad line is
// an error.
func readJournal(path string) (rows []Row, torn bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var lines [][]byte
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	for i, l := range lines {
		r, err := DecodeRow(l)
		if err != nil {
			if i == len(lines)-1 && errors.Is(err, errNotARow) {
				return rows, true, nil
			}
			return nil, false, fmt.Errorf("read %s: line %d: %v", path, i+1, err)
		}
		rows = append(rows, r)
	}
	return rows, false, nil
}

// EncodeRow is a row as one line of JSON: the journal's, and what a
// runner's worker sends back (JSON has no infinity: ε goes as text too).
func EncodeRow(r Row) ([]byte, error) {
	jr := jsonRow{Row: r, EpsilonText: fmt.Sprint(r.Epsilon)}
	jr.Epsilon = 0
	return json.Marshal(jr)
}

var errNotARow = errors.New("not a job record")

// DecodeRow reads what EncodeRow wrote.
func DecodeRow(b []byte) (Row, error) {
	var jr jsonRow
	if err := json.Unmarshal(b, &jr); err != nil {
		return Row{}, fmt.Errorf("%w: %v", errNotARow, err)
	}
	var err error
	if jr.Epsilon, err = parseEpsilon(jr.EpsilonText); err != nil {
		return Row{}, err
	}
	return jr.Row, nil
}

func parseEpsilon(s string) (float64, error) {
	var v float64
	if s == "+Inf" || s == "Inf" || s == "inf" {
		return math.Inf(1), nil
	}
	if _, err := fmt.Sscan(s, &v); err != nil {
		return 0, fmt.Errorf("bad ε %q", s)
	}
	return v, nil
}
