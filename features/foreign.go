package features

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dpfeat/dpfeat/internal/interrupt"
)

// ImportOptions say how to read a file that is not a dpfeat feature file
// (an Arrow file or stream from another writer, Parquet, NumPy .npy/.npz,
// CSV): which columns hold what, and the class list.
type ImportOptions struct {
	// Classes fixes the class list, in order. Without it, a file that
	// carries no class names (dpfeat.classes, a Hugging Face ClassLabel,
	// an .npz "classes" array) takes them from its label values, sorted
	// (numerically for integer labels), and the guarantee lists that list
	// as assumed public. Integer labels match a class list of integer
	// names by name, any other class list by index (0-based); string
	// labels match by name. For a dpfeat feature file, Classes renames
	// its classes (the count must match).
	Classes []string
	// FeaturesColumn, LabelColumn and IDColumn name the columns (for a
	// CSV file without a header row: 0-based column numbers). By default
	// the label is the first of label, labels, y, target, class present,
	// the id is "id", and the features are the one list column, or every
	// other numeric column, one dimension each.
	FeaturesColumn, LabelColumn, IDColumn string
	// IDFromIndex takes a CSV file's unnamed first column — the index
	// pandas' df.to_csv writes — as the id (--id-column ""); without it
	// that column is dropped, with a note, never read as a feature.
	IDFromIndex bool
	// Labels is a file of labels for a features-only file (.npy): an .npy
	// array or a text file with one label per line.
	Labels string
	// Expected is the class list a file without class names is read
	// with when Classes is not set, instead of its label values: eval and
	// predict read test data with the classifier's classes.
	Expected []string
	// Memory bounds what a reader holds at once beyond a block of rows
	// (a NumPy file's labels, a Fortran-order array read whole); 0: the
	// default budget (memsize.Default), as fit's --memory.
	Memory int64
}

func (o ImportOptions) key() string {
	return strings.Join([]string{strings.Join(o.Classes, "\x00"), o.FeaturesColumn, o.LabelColumn, o.IDColumn, fmt.Sprint(o.IDFromIndex), o.Labels, strings.Join(o.Expected, "\x00")}, "\x01")
}

// DefaultLabelColumns are the column names taken as the label, first
// present first, when ImportOptions.LabelColumn is not set.
var DefaultLabelColumns = []string{"label", "labels", "y", "target", "class"}

// ClassesFromLabels is the value of the MetaClassesFrom key of a file whose
// class list was taken from its label values: derived from the data, so the
// guarantee of a fit on it lists the class list as assumed public.
const ClassesFromLabels = "label values"

// MetaClassesFrom records where a file's class list came from when it was
// not given with the data (see ClassesFromLabels).
const MetaClassesFrom = "dpfeat.classes_from"

// Format names of the files Open reads.
const (
	FormatDpfeat      = "dpfeat feature file"
	FormatArrowFile   = "Arrow IPC file"
	FormatArrowStream = "Arrow IPC stream"
	FormatParquet     = "Parquet"
	FormatNPY         = "NumPy .npy"
	FormatNPZ         = "NumPy .npz"
	FormatCSV         = "CSV"
	FormatShards      = "dpfeat shard manifest"
)

// Import describes how a file that is not a dpfeat feature file was read.
type Import struct {
	// Format is the file's format (one of the Format constants).
	Format string
	// ClassesFromLabels is set when the class list was taken from the
	// label values (the fit's guarantee lists it as assumed public).
	ClassesFromLabels bool
	// Columns says which columns became what, for the user.
	Columns string
}

// sniff returns the format of the file at path from its first bytes (and,
// for text, its name).
func sniff(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return "", fmt.Errorf("read %s: is a directory; expected a feature file", path)
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	switch {
	case len(head) >= 6 && string(head[:6]) == string(arrowMagic):
		return FormatArrowFile, nil
	case len(head) >= 4 && string(head[:4]) == "PAR1":
		return FormatParquet, nil
	case len(head) >= 6 && string(head[:6]) == "\x93NUMPY":
		return FormatNPY, nil
	case len(head) >= 4 && string(head[:4]) == "PK\x03\x04":
		return FormatNPZ, nil
	case len(head) >= 8 && string(head[:4]) == "\xff\xff\xff\xff":
		return FormatArrowStream, nil
	case n == 0:
		return "", fmt.Errorf("read %s: the file is empty; expected a feature file", path)
	case isShardManifest(head):
		return FormatShards, nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".arrow", ".feather", ".ipc", ".arrows":
		return "", fmt.Errorf("read %s: not an Arrow IPC file or stream (no ARROW1 magic, no stream header)", path)
	case ".parquet", ".pq":
		return "", fmt.Errorf("read %s: not a Parquet file (no PAR1 magic)", path)
	case ".npy", ".npz":
		return "", fmt.Errorf("read %s: not a NumPy .npy array or .npz archive", path)
	}
	if isText(head) {
		return FormatCSV, nil
	}
	return "", fmt.Errorf("read %s: not a format dpfeat reads (expected an Arrow IPC file or stream, Parquet, NumPy .npy/.npz, or CSV)", path)
}

// isText reports whether the first bytes of a file look like text: no NUL,
// valid UTF-8 (the last character may be cut).
func isText(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	for len(head) > 0 {
		r, size := utf8.DecodeRune(head)
		if r == utf8.RuneError && size == 1 {
			return len(head) < utf8.UTFMax && !utf8.FullRune(head)
		}
		head = head[size:]
	}
	return true
}

// rawBatch is a block of rows read from a foreign file, before the labels
// are mapped to classes.
type rawBatch struct {
	dim      int
	features []float32
	// labels: one per row; null[i] (when null is not nil) marks a row
	// without one. Integer labels are in decimal.
	labels []string
	null   []bool
	ids    []string
}

func (b *rawBatch) rows() int { return len(b.labels) }

// labelKind is the type of a source's labels.
type labelKind int

const (
	noLabels labelKind = iota
	intLabels
	stringLabels
)

// source streams a foreign file's rows, from the start after reset.
type source interface {
	// dim is the feature dimension.
	dim() int
	// kind is the type of the labels (decided by the file's schema; for
	// CSV by its first labelled row).
	kind() labelKind
	// meta is the dpfeat metadata the file carries (its class names, or
	// those it declares otherwise: a Hugging Face ClassLabel, an .npz
	// "classes" array); zero when none.
	meta() Metadata
	// hasIDs says whether rows carry ids.
	hasIDs() bool
	// next returns the next block of rows, io.EOF at the end.
	next() (*rawBatch, error)
	reset() error
	// columns describes the column choice for the user.
	columns() string
	close() error
}

// maxDerivedClasses bounds a class list taken from label values: more
// distinct values than this is a wrong column, not a classification task.
const maxDerivedClasses = 100000

// classMap maps a source's label strings to class indices.
type classMap struct {
	classes []string
	index   map[string]int32
	// byIndex: integer labels are class indices (a class list of
	// non-integer names); otherwise labels match names.
	byIndex bool
	from    string // where the list came from, for errors
}

func allIntegerNames(names []string) bool {
	for _, c := range names {
		if _, err := strconv.ParseInt(c, 10, 64); err != nil {
			return false
		}
	}
	return len(names) > 0
}

// newClassMap maps labels of kind to classes. Integer labels index a list
// the file declares (its labels were written as indices), or any list of
// non-integer names; they match a list of integer names by name.
func newClassMap(classes []string, kind labelKind, from string, declared bool) *classMap {
	m := &classMap{classes: classes, index: map[string]int32{}, from: from}
	for i, c := range classes {
		key := c
		if kind == intLabels {
			if v, err := strconv.ParseInt(c, 10, 64); err == nil {
				key = strconv.FormatInt(v, 10) // "05" names label 5
			}
		}
		m.index[key] = int32(i)
	}
	m.byIndex = kind == intLabels && (declared || !allIntegerNames(classes))
	return m
}

func (m *classMap) label(s string, row int64) (int32, error) {
	if m.byIndex {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 || v >= int64(len(m.classes)) {
			return 0, fmt.Errorf("row %d: its label is not a class index 0..%d of %s", row, len(m.classes)-1, m.from)
		}
		return int32(v), nil
	}
	if i, ok := m.index[s]; ok {
		return i, nil
	}
	return 0, fmt.Errorf("row %d: its label is not one of the %d classes of %s", row, len(m.classes), m.from)
}

// deriveClasses reads every label of src and returns the distinct values,
// sorted (numerically for integers): the class list of a file that gives
// none.
func deriveClasses(src source, path string) ([]string, error) {
	seen := map[string]bool{}
	for {
		b, err := src.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for i, l := range b.labels {
			if (b.null == nil || !b.null[i]) && !seen[l] {
				if len(seen) == maxDerivedClasses {
					return nil, fmt.Errorf("read %s: the label column holds more than %d distinct values; name the label column with --label-column, or the classes with --classes", path, maxDerivedClasses)
				}
				seen[l] = true
			}
		}
	}
	if err := src.reset(); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(seen))
	for l := range seen {
		out = append(out, l)
	}
	if src.kind() == intLabels {
		sort.Slice(out, func(i, j int) bool {
			a, _ := strconv.ParseInt(out[i], 10, 64)
			b, _ := strconv.ParseInt(out[j], 10, 64)
			return a < b
		})
	} else {
		sort.Strings(out)
	}
	return out, nil
}

// convert writes src as a dpfeat feature file to dst (through Create's
// temporary file and rename) and says how it was read.
func convert(src source, path, format, dst string, opt ImportOptions, allowNonFinite bool) (Import, error) {
	imp := Import{Format: format, Columns: src.columns()}
	meta := src.meta()
	if meta.Source == "" {
		meta.Source = format + " " + path
	}
	if meta.Extra == nil {
		meta.Extra = map[string]string{}
	}
	imp.ClassesFromLabels = meta.Extra[MetaClassesFrom] == ClassesFromLabels
	var cm *classMap
	kind := src.kind()
	switch {
	case len(opt.Classes) > 0:
		if err := CheckClassNames(opt.Classes); err != nil {
			return imp, fmt.Errorf("--classes: %w", err)
		}
		cm = newClassMap(opt.Classes, kind, "--classes", false)
		imp.ClassesFromLabels = false
		delete(meta.Extra, MetaClassesFrom)
	case len(meta.Classes) > 0:
		if err := CheckClassNames(meta.Classes); err != nil {
			return imp, fmt.Errorf("read %s: its class names: %w", path, err)
		}
		cm = newClassMap(meta.Classes, kind, "the file's class names", true)
	case len(opt.Expected) > 0 && kind != noLabels:
		cm = newClassMap(opt.Expected, kind, "the expected classes", false)
	case kind != noLabels:
		classes, err := deriveClasses(src, path)
		if err != nil {
			return imp, err
		}
		cm = newClassMap(classes, kind, "the label values", false)
		imp.ClassesFromLabels = true
		meta.Extra[MetaClassesFrom] = ClassesFromLabels
	}
	if cm != nil {
		meta.Classes = cm.classes
	}
	if src.dim() < 1 {
		return imp, fmt.Errorf("read %s: no rows; a feature file needs at least one", path)
	}
	w, err := Create(dst, src.dim(), meta, WriterOptions{WithID: src.hasIDs(), AllowNonFinite: allowNonFinite})
	if err != nil {
		return imp, err
	}
	defer w.Abort()
	var row int64
	for {
		rb, err := src.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return imp, err
		}
		b := Batch{Dim: rb.dim, Features: rb.features, Labels: make([]int32, rb.rows()), IDs: rb.ids}
		for i, l := range rb.labels {
			switch {
			case kind == noLabels || (rb.null != nil && rb.null[i]):
				b.Labels[i] = Unlabeled
			case cm.byIndex && l == "-1":
				// Labels that index a class list mark an unlabeled
				// row with −1 (as .npz exports and scikit-learn's
				// semi-supervised estimators do).
				b.Labels[i] = Unlabeled
			default:
				if b.Labels[i], err = cm.label(l, row+int64(i)); err != nil {
					return imp, fmt.Errorf("read %s: %w", path, err)
				}
			}
		}
		for i, id := range b.IDs {
			if !utf8.ValidString(id) {
				return imp, fmt.Errorf("read %s: row %d: the id is not valid UTF-8", path, row+int64(i))
			}
		}
		if j := FirstNonFinite(b.Features); j >= 0 && !allowNonFinite {
			return imp, fmt.Errorf("read %s: row %d: feature %d is %v; expected finite values", path, row+int64(j/rb.dim), j%rb.dim, b.Features[j])
		}
		if err := w.Write(b); err != nil {
			return imp, err
		}
		row += int64(rb.rows())
	}
	if row == 0 {
		return imp, fmt.Errorf("read %s: no rows; a feature file needs at least one", path)
	}
	return imp, w.Close()
}

// CheckClassNames is the one rule for a list of class names: none empty,
// none twice.
func CheckClassNames(names []string) error {
	seen := map[string]bool{}
	for i, c := range names {
		if strings.TrimSpace(c) == "" {
			return fmt.Errorf("class %d has an empty name", i)
		}
		if seen[c] {
			return fmt.Errorf("class name %q appears twice", c)
		}
		seen[c] = true
	}
	return nil
}

// openSource opens a foreign file of the given format.
func openSource(path, format string, opt ImportOptions) (source, error) {
	switch format {
	case FormatArrowFile, FormatArrowStream, FormatParquet:
		return openTableSource(path, format, opt)
	case FormatNPY, FormatNPZ:
		return openNumpySource(path, format, opt)
	case FormatCSV:
		return openCSVSource(path, opt)
	}
	return nil, fmt.Errorf("read %s: no reader for %s", path, format)
}

// copyNative writes an open dpfeat file (with its classes as opened) to dst.
func copyNative(f *File, dst string) error {
	w, err := Create(dst, f.Dim(), f.Metadata(), WriterOptions{WithID: f.HasIDs()})
	if err != nil {
		return err
	}
	defer w.Abort()
	if err := f.Each(w.Write); err != nil {
		return err
	}
	return w.Close()
}

// converted keeps the dpfeat form of the last foreign files this process
// has read, so that a file opened again (a sweep's fits, a second pass) is
// converted once: an unlinked temporary file, held open while it is kept.
var converted struct {
	sync.Mutex
	m     map[string]*conversion
	order []string // oldest first
}

// keptConversions bounds the conversions kept open.
const keptConversions = 8

type conversion struct {
	f   *os.File
	imp Import
}

func conversionKey(path string, opt ImportOptions, allowNonFinite bool) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	return strings.Join([]string{abs, strconv.FormatInt(st.Size(), 10), st.ModTime().Format(time.RFC3339Nano), opt.key(), strconv.FormatBool(allowNonFinite)}, "\x02"), nil
}

// openForeign converts a foreign file once per process and opens the
// result, reporting errors by the original path.
func openForeign(path, format string, opt ReadOptions) (*File, error) {
	key, err := conversionKey(path, opt.Import, opt.AllowNonFinite)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	converted.Lock()
	defer converted.Unlock()
	c := converted.m[key]
	if c == nil {
		src, err := openSource(path, format, opt.Import)
		if err != nil {
			return nil, err
		}
		defer src.close()
		dir, err := os.MkdirTemp("", "dpfeat-import-")
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		defer interrupt.Temporary(dir)()
		defer os.RemoveAll(dir) // made by MkdirTemp above, for this conversion alone
		dst := filepath.Join(dir, "features.arrow")
		imp, err := convert(src, path, format, dst, opt.Import, opt.AllowNonFinite)
		if err != nil {
			return nil, err
		}
		f, err := os.Open(dst)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		c = &conversion{f: f, imp: imp}
		if converted.m == nil {
			converted.m = map[string]*conversion{}
		}
		if len(converted.order) == keptConversions {
			old := converted.order[0]
			converted.m[old].f.Close()
			delete(converted.m, old)
			converted.order = converted.order[1:]
		}
		converted.m[key] = c
		converted.order = append(converted.order, key)
	}
	f, err := dupFile(c.f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	ff, err := openNative(path, f, ReadOptions{AllowNonFinite: opt.AllowNonFinite, NoMmap: opt.NoMmap})
	if err != nil {
		return nil, err
	}
	imp := c.imp
	ff.imported = &imp
	return ff, nil
}

// float32Of converts one value to a feature, refusing what float32 cannot
// hold.
func float32Of(v float64, row int64, j int) (float32, error) {
	f := float32(v)
	if math.IsInf(float64(f), 0) && !math.IsInf(v, 0) {
		return 0, fmt.Errorf("row %d: feature %d is beyond float32's range", row, j)
	}
	return f, nil
}

// pickColumn is the one rule for choosing a column (or an .npz array,
// noun) among names: the one asked for by flag, an error naming the
// others when there is none of that name, or else the first default
// present; −1 when none is.
func pickColumn(names []string, asked, flag, noun string, defaults ...string) (int, error) {
	if asked != "" {
		if i := slices.Index(names, asked); i >= 0 {
			return i, nil
		}
		what := "a column"
		if noun == "array" {
			what = "an array of the archive"
		}
		return -1, fmt.Errorf("%s %q is not %s (%ss: %s)", flag, asked, what, noun, strings.Join(names, ", "))
	}
	for _, d := range defaults {
		if i := slices.Index(names, d); i >= 0 {
			return i, nil
		}
	}
	return -1, nil
}

// uniqueColumns refuses two columns of one name: which one a name picks
// (the label, the id, a flag's) would be a guess, and a second "label"
// column once became a feature without a word.
func uniqueColumns(names []string) error {
	seen := make(map[string]int, len(names))
	for i, n := range names {
		if j, ok := seen[n]; ok {
			return fmt.Errorf("columns %d and %d are both named %q; give each column its own name", j, i, n)
		}
		seen[n] = i
	}
	return nil
}

// labelColumn picks the label column: the one asked for, or the first of
// DefaultLabelColumns present.
func labelColumn(names []string, asked string) (int, error) {
	return pickColumn(names, asked, "--label-column", "column", DefaultLabelColumns...)
}

// idColumn picks the id column: the one asked for, or "id".
func idColumn(names []string, asked string) (int, error) {
	return pickColumn(names, asked, "--id-column", "column", ColID)
}

// describeColumns says which columns became what.
func describeColumns(features []string, label, id string) string {
	var b strings.Builder
	if len(features) == 1 {
		fmt.Fprintf(&b, "features from %q", features[0])
	} else {
		fmt.Fprintf(&b, "features from %d columns (%s … %s)", len(features), features[0], features[len(features)-1])
	}
	if label != "" {
		fmt.Fprintf(&b, ", labels from %q", label)
	} else {
		b.WriteString(", no labels")
	}
	if id != "" {
		fmt.Fprintf(&b, ", ids from %q", id)
	}
	return b.String()
}

// Note is the line that tells the user how a foreign file was read (nil
// Import: ""): its format, the columns, and where the classes came from.
func (imp *Import) Note(path string, classes []string) string {
	if imp == nil {
		return ""
	}
	s := fmt.Sprintf("read %s as %s: %s", path, imp.Format, imp.Columns)
	if imp.ClassesFromLabels {
		shown := classes
		if len(shown) > 12 {
			shown = append(slices.Clone(shown[:12]), "…")
		}
		s += fmt.Sprintf("; %d classes from the label values (%s), assumed public: --classes fixes them", len(classes), strings.Join(shown, ", "))
	}
	return s
}

// integerLabel returns the decimal form of a text label that is an
// integer ("7", "+7", "7.0", "7e0": NumPy's savetxt writes floats), and
// whether it is one.
func integerLabel(s string) (string, bool) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.FormatInt(v, 10), true
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil && v == math.Trunc(v) && math.Abs(v) <= 1<<53 {
		return strconv.FormatInt(int64(v), 10), true
	}
	return "", false
}
