package features

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// csvSource reads a CSV (or, named .tsv, tab-separated) feature table: a
// header row naming the columns (or none, when the first row is all
// numbers: the columns are then numbered from 0), a label column, an
// optional id column, and one numeric column per feature dimension.
type csvSource struct {
	path      string
	comma     rune
	f         *os.File
	r         *csv.Reader
	header    bool
	names     []string
	feats     []int
	label, id int
	// index is the unnamed first column (pandas' index), dropped; −1: none.
	index    int
	lkind    labelKind
	firstRow int64 // the first labelled row, which set lkind
	row      int64
	cols     string
	pending  []string
}

func openCSVSource(path string, opt ImportOptions) (source, error) {
	s := &csvSource{path: path, comma: ',', label: -1, id: -1, index: -1}
	if strings.EqualFold(filepath.Ext(path), ".tsv") {
		s.comma = '\t'
	}
	fail := func(err error) (source, error) {
		s.close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := s.reset(); err != nil {
		return fail(err)
	}
	first := s.pending
	if first == nil {
		return fail(errors.New("no rows; a feature file needs at least one"))
	}
	s.header = false
	for _, c := range first {
		if _, err := strconv.ParseFloat(strings.TrimSpace(c), 64); err != nil {
			s.header = true
			break
		}
	}
	if s.header {
		s.pending = nil
		for _, c := range first {
			s.names = append(s.names, strings.TrimSpace(c))
		}
		if err := uniqueColumns(s.names); err != nil {
			return fail(err)
		}
		var err error
		if s.label, err = labelColumn(s.names, opt.LabelColumn); err != nil {
			return fail(err)
		}
		// df.to_csv writes the index as an unnamed first column: it is
		// not a feature (read as one, it once cost 4 points of accuracy).
		unnamed := s.names[0] == "" || s.names[0] == "Unnamed: 0"
		switch {
		case opt.IDFromIndex && !unnamed:
			return fail(fmt.Errorf("--id-column \"\" takes the unnamed first column (the index pandas writes) as the id, but the first column is named %q", s.names[0]))
		case opt.IDFromIndex:
			s.id = 0
		default:
			if s.id, err = idColumn(s.names, opt.IDColumn); err != nil {
				return fail(err)
			}
			if unnamed && s.label != 0 && s.id != 0 {
				s.index = 0
			}
		}
	} else {
		for i := range first {
			s.names = append(s.names, strconv.Itoa(i))
		}
		byNumber := func(asked, flag string) (int, error) {
			if asked == "" {
				return -1, nil
			}
			i, err := strconv.Atoi(asked)
			if err != nil || i < 0 || i >= len(first) {
				return -1, fmt.Errorf("%s %q: the file has no header row, so columns are numbered 0..%d", flag, asked, len(first)-1)
			}
			return i, nil
		}
		var err error
		if s.label, err = byNumber(opt.LabelColumn, "--label-column"); err != nil {
			return fail(err)
		}
		if s.id, err = byNumber(opt.IDColumn, "--id-column"); err != nil {
			return fail(err)
		}
	}
	if opt.FeaturesColumn != "" {
		return fail(errors.New("--features-column names a list column; a CSV file holds one column per feature dimension (every column but the label and id)"))
	}
	for i := range s.names {
		if i != s.label && i != s.id && i != s.index {
			s.feats = append(s.feats, i)
		}
	}
	if len(s.feats) == 0 {
		return fail(fmt.Errorf("no feature columns (columns: %s)", strings.Join(s.names, ", ")))
	}
	label, id := "", ""
	if s.label >= 0 {
		label = s.names[s.label]
	}
	if s.id >= 0 {
		id = s.names[s.id]
	}
	var feats []string
	for _, i := range s.feats {
		feats = append(feats, s.names[i])
	}
	s.cols = describeColumns(feats, label, id)
	if opt.IDFromIndex {
		s.cols += ", ids from the unnamed first column (the index pandas' to_csv writes)"
	}
	if s.index == 0 {
		s.cols += "; the unnamed first column (the index pandas' to_csv writes) is not read (--id-column \"\" takes it as the id)"
	}
	// The first labelled row decides whether labels are integers or names.
	if s.label >= 0 {
		for {
			rec, err := s.read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fail(err)
			}
			if l := strings.TrimSpace(rec[s.label]); l != "" {
				s.lkind = stringLabels
				if _, ok := integerLabel(l); ok {
					s.lkind = intLabels
				}
				s.firstRow = s.row - 1
				break
			}
		}
	}
	if err := s.reset(); err != nil {
		return fail(err)
	}
	return s, nil
}

func (s *csvSource) reset() error {
	s.close()
	f, err := os.Open(s.path)
	if err != nil {
		return err
	}
	s.f = f
	s.r = csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	s.r.Comma, s.r.ReuseRecord, s.r.FieldsPerRecord = s.comma, false, 0
	s.r.TrimLeadingSpace = s.comma != '\t' // with tabs it would swallow empty cells
	s.row = 0
	s.pending = nil
	rec, err := s.r.Read()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return csvError(err)
	}
	// Excel's "CSV UTF-8" starts with a byte-order mark, which would
	// otherwise become part of the first column's name.
	rec[0] = strings.TrimPrefix(rec[0], "\ufeff")
	s.pending = rec
	if s.header {
		s.pending = nil // the header row
	}
	return nil
}

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return fmt.Errorf("line %d has a different number of columns than the first", pe.Line)
		}
		return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
	}
	return err
}

// read returns the next data row.
func (s *csvSource) read() ([]string, error) {
	if p := s.pending; p != nil {
		s.pending = nil
		s.row++
		return p, nil
	}
	rec, err := s.r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, csvError(err)
	}
	s.row++
	return rec, nil
}

func (s *csvSource) next() (*rawBatch, error) {
	b := &rawBatch{dim: len(s.feats)}
	for len(b.labels) < parquetBatchRows {
		rec, err := s.read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", s.path, err)
		}
		row := s.row - 1
		for j, c := range s.feats {
			cell := strings.TrimSpace(rec[c])
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				if cell == "" {
					return nil, fmt.Errorf("read %s: row %d, column %q is empty; expected a number", s.path, row, s.names[c])
				}
				return nil, fmt.Errorf("read %s: row %d, column %q is not a number", s.path, row, s.names[c])
			}
			f, err := float32Of(v, row, j)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", s.path, err)
			}
			b.features = append(b.features, f)
		}
		l := ""
		if s.label >= 0 {
			l = strings.TrimSpace(rec[s.label])
		}
		i := len(b.labels)
		b.labels = append(b.labels, l)
		if l == "" {
			if b.null == nil {
				b.null = make([]bool, i, parquetBatchRows)
			}
		} else if v, ok := integerLabel(l); ok {
			if s.lkind != intLabels {
				return nil, fmt.Errorf("read %s: row %d: its label is an integer but row %d's is a name; labels must be all integers or all names", s.path, row, s.firstRow)
			}
			b.labels[i] = v
		} else if s.lkind != stringLabels {
			return nil, fmt.Errorf("read %s: row %d: its label is a name but row %d's is an integer; labels must be all integers or all names", s.path, row, s.firstRow)
		}
		if b.null != nil {
			b.null = append(b.null, l == "")
		}
		if s.id >= 0 {
			if b.ids == nil {
				b.ids = make([]string, i, parquetBatchRows)
			}
			b.ids = append(b.ids, strings.TrimSpace(rec[s.id]))
		}
	}
	if len(b.labels) == 0 {
		return nil, io.EOF
	}
	return b, nil
}

func (s *csvSource) dim() int        { return len(s.feats) }
func (s *csvSource) kind() labelKind { return s.lkind }
func (s *csvSource) meta() Metadata  { return Metadata{} }
func (s *csvSource) hasIDs() bool    { return s.id >= 0 }
func (s *csvSource) columns() string { return s.cols }

func (s *csvSource) close() error {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	return nil
}
