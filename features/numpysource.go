package features

import (
	"archive/zip"
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/float16"

	"github.com/dpfeat/dpfeat/internal/memsize"
)

// npyHeader is the header of a NumPy .npy array (format versions 1–3).
type npyHeader struct {
	descr   string
	kind    byte // f, i, u, b (bool), U (UTF-32 string), S (bytes)
	size    int  // bytes per element
	order   binary.ByteOrder
	fortran bool
	shape   []int
}

func (h npyHeader) count() int {
	n := 1
	for _, s := range h.shape {
		n *= s
	}
	return n
}

func (h npyHeader) shapeString() string {
	var s []string
	for _, d := range h.shape {
		s = append(s, strconv.Itoa(d))
	}
	if len(s) == 1 {
		return "(" + s[0] + ",)"
	}
	return "(" + strings.Join(s, ", ") + ")"
}

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// maxNPYHeader bounds the header an .npy file may claim, maxNPYElement
// one element (a label string of a million characters is not a label:
// dtype <U1000000000000 once asked for 4 TB for an empty array), and
// maxNPYNames the elements of a class-names array.
const (
	maxNPYHeader  = 1 << 20
	maxNPYElement = 1 << 20
	maxNPYNames   = 1 << 20
)

// maxDeflateRatio is the most DEFLATE can expand its input (RFC 1951's
// longest match, 258 bytes, in a 2-bit code): an .npz entry that claims
// more than this times its compressed size is corrupt or a bomb.
const maxDeflateRatio = 1032

// zipEntrySize returns the bytes an .npz entry will decompress to, after
// checking the size its directory claims against what its compressed size
// allows: the claim is what arrays are sized by, and a 1.5 KB archive
// once claimed 7.6 GB of features.
func zipEntrySize(f *zip.File) (int64, error) {
	c, u := f.CompressedSize64, f.UncompressedSize64
	switch f.Method {
	case zip.Store:
		if u != c {
			return 0, fmt.Errorf("%s: stored uncompressed, it claims %d bytes in %d", f.Name, u, c)
		}
	case zip.Deflate:
		if u/maxDeflateRatio > c+1 {
			return 0, fmt.Errorf("%s: it claims %d bytes from %d compressed, more than DEFLATE can expand (%d times)", f.Name, u, c, maxDeflateRatio)
		}
	default:
		return 0, fmt.Errorf("%s: compression method %d; .npz archives are stored or deflated", f.Name, f.Method)
	}
	if u > math.MaxInt64 {
		return 0, fmt.Errorf("%s: it claims %d bytes", f.Name, u)
	}
	return int64(u), nil
}

func readNPYHeader(r io.Reader) (npyHeader, error) {
	var h npyHeader
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil || string(pre[:6]) != "\x93NUMPY" {
		return h, errors.New("not a NumPy .npy array (no \\x93NUMPY magic)")
	}
	var n int
	switch pre[6] {
	case 1:
		b := make([]byte, 2)
		if _, err := io.ReadFull(r, b); err != nil {
			return h, errors.New("truncated .npy header")
		}
		n = int(binary.LittleEndian.Uint16(b))
	case 2, 3:
		b := make([]byte, 4)
		if _, err := io.ReadFull(r, b); err != nil {
			return h, errors.New("truncated .npy header")
		}
		n = int(binary.LittleEndian.Uint32(b))
	default:
		return h, fmt.Errorf(".npy format version %d.%d; expected 1, 2 or 3", pre[6], pre[7])
	}
	if n > maxNPYHeader {
		return h, fmt.Errorf(".npy header of %d bytes; expected at most %d", n, maxNPYHeader)
	}
	hb := make([]byte, n)
	if _, err := io.ReadFull(r, hb); err != nil {
		return h, errors.New("truncated .npy header")
	}
	text := string(hb)
	m := npyDescr.FindStringSubmatch(text)
	if m == nil {
		return h, errors.New("its dtype is a structured (record) type; expected a plain numeric or string array")
	}
	h.descr = m[1]
	if m := npyFortran.FindStringSubmatch(text); m != nil {
		h.fortran = m[1] == "True"
	}
	m = npyShape.FindStringSubmatch(text)
	if m == nil {
		return h, errors.New(".npy header has no shape")
	}
	for _, f := range strings.Split(m[1], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		d, err := strconv.Atoi(f)
		if err != nil || d < 0 {
			return h, fmt.Errorf(".npy shape (%s) is not a tuple of sizes", m[1])
		}
		h.shape = append(h.shape, d)
	}
	if len(h.descr) < 2 {
		return h, fmt.Errorf("dtype %q is not one dpfeat reads", h.descr)
	}
	switch h.descr[0] {
	case '<', '|', '=':
		h.order = binary.LittleEndian
	case '>':
		h.order = binary.BigEndian
	default:
		return h, fmt.Errorf("dtype %q is not one dpfeat reads", h.descr)
	}
	h.kind = h.descr[1]
	if h.kind == 'O' {
		return h, errors.New("dtype object (pickled Python objects) is not read; save numbers, or strings as dtype str (<U)")
	}
	size, err := strconv.Atoi(h.descr[2:])
	if err != nil || size < 1 {
		return h, fmt.Errorf("dtype %q is not one dpfeat reads", h.descr)
	}
	if size > maxNPYElement/4 {
		return h, fmt.Errorf("dtype %q has elements of %d bytes; expected at most %d", h.descr, size, maxNPYElement/4)
	}
	h.size = size
	switch {
	case h.kind == 'f' && (size == 2 || size == 4 || size == 8),
		(h.kind == 'i' || h.kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8),
		h.kind == 'b' && size == 1, h.kind == 'S':
	case h.kind == 'U':
		h.size = 4 * size // UTF-32 code units
	default:
		return h, fmt.Errorf("dtype %q is not one dpfeat reads (floats, integers, bool, str)", h.descr)
	}
	return h, nil
}

// checkSize refuses a shape whose data would exceed the total bytes of
// the array (header included): the sizes are read before anything is
// allocated by them.
func (h npyHeader) checkSize(total int64) error {
	n := uint64(1)
	for _, d := range h.shape {
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 {
			return fmt.Errorf("shape %s is larger than the file", h.shapeString())
		}
		n = lo
	}
	if hi, need := bits.Mul64(n, uint64(h.size)); hi != 0 || need > uint64(max(total, 0)) {
		return fmt.Errorf("shape %s of %s needs more bytes than the file's %d", h.shapeString(), h.descr, total)
	}
	return nil
}

// number decodes element b (h.size bytes) of a numeric array.
func (h npyHeader) number(b []byte) float64 {
	switch h.kind {
	case 'f':
		switch h.size {
		case 2:
			return float64(float16.FromBits(h.order.Uint16(b)).Float32())
		case 4:
			return float64(math.Float32frombits(h.order.Uint32(b)))
		default:
			return math.Float64frombits(h.order.Uint64(b))
		}
	case 'i':
		switch h.size {
		case 1:
			return float64(int8(b[0]))
		case 2:
			return float64(int16(h.order.Uint16(b)))
		case 4:
			return float64(int32(h.order.Uint32(b)))
		default:
			return float64(int64(h.order.Uint64(b)))
		}
	case 'u', 'b':
		switch h.size {
		case 1:
			return float64(b[0])
		case 2:
			return float64(h.order.Uint16(b))
		case 4:
			return float64(h.order.Uint32(b))
		default:
			return float64(h.order.Uint64(b))
		}
	}
	panic("features: number of a non-numeric .npy array")
}

// text decodes element b of a string array.
func (h npyHeader) text(b []byte) (string, error) {
	if h.kind == 'S' {
		return strings.TrimRight(string(b), "\x00"), nil
	}
	var s strings.Builder
	for k := 0; k+4 <= len(b); k += 4 {
		r := rune(h.order.Uint32(b[k:]))
		if r == 0 {
			break
		}
		if !utf8.ValidRune(r) {
			return "", fmt.Errorf("invalid code point %#x", r)
		}
		s.WriteRune(r)
	}
	return s.String(), nil
}

// readLabelArray reads a whole 1-D (or N×1) label array as label strings:
// want elements (the features' rows; −1 for class names, at most
// maxNPYNames), checked against the header before anything is allocated,
// and within the memory budget.
func readLabelArray(r io.Reader, size int64, name string, want int, memory int64) ([]string, []bool, labelKind, error) {
	h, err := readNPYHeader(r)
	if err == nil {
		err = h.checkSize(size)
	}
	if err != nil {
		return nil, nil, noLabels, fmt.Errorf("%s: %v", name, err)
	}
	if len(h.shape) == 2 && h.shape[1] == 1 {
		h.shape = h.shape[:1]
	}
	if len(h.shape) != 1 {
		return nil, nil, noLabels, fmt.Errorf("%s has shape %s; expected (rows,)", name, h.shapeString())
	}
	n := h.shape[0]
	switch {
	case want >= 0 && n != want:
		return nil, nil, noLabels, fmt.Errorf("%s holds %d elements for %d rows of features", name, n, want)
	case want < 0 && n > maxNPYNames:
		return nil, nil, noLabels, fmt.Errorf("%s holds %d names; expected at most %d", name, n, maxNPYNames)
	}
	if need := int64(n) * (16 + int64(h.size)); memory > 0 && need > memory {
		return nil, nil, noLabels, fmt.Errorf("%s: %d elements need %s, more than the memory budget %s", name, n, memsize.String(float64(need)), memsize.String(float64(memory)))
	}
	br := bufio.NewReader(r)
	labels, null := make([]string, n), []bool(nil)
	kind := intLabels
	if h.kind == 'U' || h.kind == 'S' || h.kind == 'b' {
		kind = stringLabels
	}
	el := make([]byte, h.size)
	for i := range labels {
		if _, err := io.ReadFull(br, el); err != nil {
			return nil, nil, noLabels, fmt.Errorf("%s: truncated at element %d of %d", name, i, n)
		}
		switch h.kind {
		case 'U', 'S':
			if labels[i], err = h.text(el); err != nil {
				return nil, nil, noLabels, fmt.Errorf("%s: element %d: %v", name, i, err)
			}
		case 'b':
			labels[i] = strconv.FormatBool(el[0] != 0)
		default:
			v := h.number(el)
			switch {
			case math.IsNaN(v):
				if null == nil {
					null = make([]bool, n)
				}
				null[i] = true
			case v != math.Trunc(v) || math.Abs(v) > 1<<53:
				return nil, nil, noLabels, fmt.Errorf("%s: row %d: its label is not an integer", name, i)
			default:
				labels[i] = strconv.FormatInt(int64(v), 10)
			}
		}
	}
	if err := drained(br, name); err != nil {
		return nil, nil, noLabels, err
	}
	return labels, null, kind, nil
}

// readTextLabels reads one label per line, want of them (the features'
// rows); integers unless any line is not one (then all must be names: a
// mix is an error naming the line).
func readTextLabels(r io.Reader, name string, want int) ([]string, []bool, labelKind, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var labels []string
	var null []bool
	kind, firstRow := noLabels, 0
	for i := 0; sc.Scan(); i++ {
		if i == want {
			return nil, nil, noLabels, fmt.Errorf("%s holds more than %d labels, one per row of features", name, want)
		}
		l := strings.TrimSpace(sc.Text())
		labels = append(labels, l)
		null = append(null, l == "")
		if l == "" {
			continue
		}
		k := stringLabels
		if v, ok := integerLabel(l); ok {
			k, labels[i] = intLabels, v
		}
		switch {
		case kind == noLabels:
			kind, firstRow = k, i
		case k != kind:
			return nil, nil, noLabels, fmt.Errorf("%s: line %d: its label is %s but line %d's is %s; labels must be all integers or all names", name, i+1, kindName(k), firstRow+1, kindName(kind))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, noLabels, fmt.Errorf("%s: %v", name, err)
	}
	return labels, null, kind, nil
}

func kindName(k labelKind) string {
	if k == intLabels {
		return "an integer"
	}
	return "a name"
}

// npz array names taken by default, first present first.
var (
	npzFeatures = []string{"X", "x", "features", "embeddings", "arr_0"}
	npzLabels   = []string{"y", "Y", "labels", "label", "targets", "target", "arr_1"}
	npzIDs      = []string{"ids", "id"}
	npzClasses  = []string{"classes", "class_names"}
)

// npzDataID reads an archive's NPZDataID array ("" without one), without
// reading the others.
func npzDataID(path string) (string, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return "", fmt.Errorf("read %s: not a readable .npz archive: %v", path, err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if strings.TrimSuffix(f.Name, ".npy") != NPZDataID {
			continue
		}
		s := &numpySource{memory: memsize.Default}
		id, _, _, err := s.readEntry(f, NPZDataID+".npy", 1)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", path, err)
		}
		return id[0], nil
	}
	return "", nil
}

// NPZDataID is the .npz array that carries the source data's identity
// (Metadata.DataID) when dpfeat wrote the archive (convert, the Python
// package): one string.
const NPZDataID = "data_id"

// numpySource reads features from an .npy array (labels from
// ImportOptions.Labels) or from the X, y, ids and classes arrays of an
// .npz archive. Features are streamed in C order; labels are read whole.
type numpySource struct {
	path, format string
	zr           *zip.ReadCloser
	xEntry       *zip.File
	rc           io.Closer
	br           *bufio.Reader
	h            npyHeader
	d, n, row    int
	labels       []string
	null         []bool
	lkind        labelKind
	ids          []string
	md           Metadata
	cols         string
	whole        []float32 // a Fortran-order array, transposed
	memory       int64     // the memory budget (ImportOptions.Memory)
}

func openNumpySource(path, format string, opt ImportOptions) (source, error) {
	s := &numpySource{path: path, format: format, memory: memsize.Or(opt.Memory)}
	fail := func(err error) (source, error) {
		s.close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	xName, yName, idName, clsName := "", "", "", ""
	entries := map[string]*zip.File{}
	if format == FormatNPZ {
		zr, err := zip.OpenReader(path)
		if err != nil {
			return fail(fmt.Errorf("not a readable .npz archive: %v", err))
		}
		s.zr = zr
		var names []string
		for _, f := range zr.File {
			name := strings.TrimSuffix(f.Name, ".npy")
			if _, dup := entries[name]; dup {
				return fail(fmt.Errorf("array %q is in the archive twice", name))
			}
			entries[name] = f
			names = append(names, name)
		}
		pick := func(asked string, defaults []string, flag string) (string, error) {
			i, err := pickColumn(names, asked, flag, "array", defaults...)
			if i < 0 {
				return "", err
			}
			return names[i], nil
		}
		if xName, err = pick(opt.FeaturesColumn, npzFeatures, "--features-column"); err != nil {
			return fail(err)
		}
		if xName == "" {
			return fail(fmt.Errorf("no features array (arrays: %s); expected one of %s, or name it with --features-column", strings.Join(names, ", "), strings.Join(npzFeatures, ", ")))
		}
		if yName, err = pick(opt.LabelColumn, npzLabels, "--label-column"); err != nil {
			return fail(err)
		}
		if idName, err = pick(opt.IDColumn, npzIDs, "--id-column"); err != nil {
			return fail(err)
		}
		clsName, _ = pick("", npzClasses, "")
		for _, name := range names {
			if name != xName && name != yName && name != idName && name != clsName && name != NPZDataID {
				return fail(fmt.Errorf("array %q is neither the features (%s), the labels, the ids nor the class names; name the arrays with --features-column, --label-column, --id-column", name, xName))
			}
		}
		s.xEntry = entries[xName]
	}
	// The features' header first: their rows are what every other array
	// must hold, checked before any of them is read or allocated.
	if err := s.reset(); err != nil {
		return fail(err)
	}
	var err error
	if format == FormatNPZ {
		if yName != "" {
			if s.labels, s.null, s.lkind, err = s.readEntry(entries[yName], yName+".npy", s.n); err != nil {
				return fail(err)
			}
		}
		if idName != "" {
			if s.ids, _, _, err = s.readEntry(entries[idName], idName+".npy", s.n); err != nil {
				return fail(err)
			}
		}
		if clsName != "" {
			names, _, _, err := s.readEntry(entries[clsName], clsName+".npy", -1)
			if err != nil {
				return fail(err)
			}
			s.md.Classes = names
		}
		if e := entries[NPZDataID]; e != nil {
			id, _, _, err := s.readEntry(e, NPZDataID+".npy", 1)
			if err != nil {
				return fail(err)
			}
			if id[0] == "" {
				return fail(fmt.Errorf("array %s is empty; expected the data's identity", NPZDataID))
			}
			s.md.DataID = id[0]
		}
	} else if opt.Labels != "" {
		lf, err := os.Open(opt.Labels)
		if err != nil {
			return fail(fmt.Errorf("--labels: %v", err))
		}
		head := make([]byte, 6)
		n, _ := io.ReadFull(lf, head)
		lf.Seek(0, io.SeekStart)
		if string(head[:n]) == "\x93NUMPY" {
			st, serr := lf.Stat()
			if serr != nil {
				lf.Close()
				return fail(fmt.Errorf("--labels: %v", serr))
			}
			s.labels, s.null, s.lkind, err = readLabelArray(lf, st.Size(), opt.Labels, s.n, s.memory)
		} else {
			s.labels, s.null, s.lkind, err = readTextLabels(lf, opt.Labels, s.n)
		}
		lf.Close()
		if err != nil {
			return fail(err)
		}
		yName = opt.Labels
	}
	switch {
	case s.labels != nil && len(s.labels) != s.n:
		return fail(fmt.Errorf("%d labels for %d rows of features", len(s.labels), s.n))
	case s.ids != nil && len(s.ids) != s.n:
		return fail(fmt.Errorf("%d ids for %d rows of features", len(s.ids), s.n))
	}
	if xName == "" {
		xName = filepath.Base(path)
	}
	s.cols = describeColumns([]string{xName}, yName, idName)
	return s, nil
}

// readEntry reads a label, id or class-names array of the archive (want
// elements; −1 for class names), to the end, where its CRC-32 is checked.
func (s *numpySource) readEntry(f *zip.File, name string, want int) ([]string, []bool, labelKind, error) {
	size, err := zipEntrySize(f)
	if err != nil {
		return nil, nil, noLabels, err
	}
	rc, err := f.Open()
	if err != nil {
		return nil, nil, noLabels, fmt.Errorf("%s: %v", name, err)
	}
	defer rc.Close()
	return readLabelArray(rc, size, name, want, s.memory)
}

// drained checks that an array's reader holds nothing after the array's
// data, reading to its end: a zip entry's CRC-32 is checked only there
// (an entry that failed its checksum was once read as intact).
func drained(r io.Reader, name string) error {
	n, err := io.Copy(io.Discard, io.LimitReader(r, 1<<20))
	switch {
	case errors.Is(err, zip.ErrChecksum):
		return fmt.Errorf("%s is damaged: its bytes fail the archive's CRC-32 check", name)
	case err != nil:
		return fmt.Errorf("%s: %v", name, err)
	case n > 0:
		return fmt.Errorf("%s holds bytes after its array's data; expected exactly the shape its header gives", name)
	}
	return nil
}

func (s *numpySource) reset() error {
	if s.rc != nil {
		s.rc.Close()
		s.rc = nil
	}
	var r io.ReadCloser
	var err error
	var size int64
	if s.xEntry != nil {
		if size, err = zipEntrySize(s.xEntry); err == nil {
			r, err = s.xEntry.Open()
		}
	} else {
		var f *os.File
		if f, err = os.Open(s.path); err == nil {
			r = f
			var st os.FileInfo
			if st, err = f.Stat(); err == nil {
				size = st.Size()
			}
		}
	}
	if err != nil {
		return err
	}
	s.rc, s.br, s.row = r, bufio.NewReaderSize(r, 1<<20), 0
	if s.h, err = readNPYHeader(s.br); err != nil {
		return err
	}
	if err := s.h.checkSize(size); err != nil {
		return fmt.Errorf("features: %v", err)
	}
	if s.h.kind != 'f' && s.h.kind != 'i' && s.h.kind != 'u' {
		return fmt.Errorf("features have dtype %q; expected numbers", s.h.descr)
	}
	if len(s.h.shape) < 2 {
		return fmt.Errorf("features have shape %s; expected (rows, dimension)", s.h.shapeString())
	}
	s.n, s.d = s.h.shape[0], s.h.count()/max(s.h.shape[0], 1)
	if s.n == 0 || s.d == 0 {
		return fmt.Errorf("features have shape %s; expected at least one row and one dimension", s.h.shapeString())
	}
	if s.h.fortran && s.whole == nil {
		if len(s.h.shape) != 2 {
			return fmt.Errorf("features have shape %s in Fortran order; expected 2 dimensions (or C order)", s.h.shapeString())
		}
		// Column-major: read whole, transposed, within the memory budget.
		if need := int64(s.n) * int64(s.d) * 4; need > s.memory {
			return fmt.Errorf("features of shape %s in Fortran order are read whole, %s, more than the memory budget %s: save them in C order (np.ascontiguousarray), or raise --memory", s.h.shapeString(), memsize.String(float64(need)), memsize.String(float64(s.memory)))
		}
		s.whole = make([]float32, s.n*s.d)
		el := make([]byte, s.h.size)
		for j := 0; j < s.d; j++ {
			for i := 0; i < s.n; i++ {
				if _, err := io.ReadFull(s.br, el); err != nil {
					return fmt.Errorf("features: truncated (%d of %d values)", j*s.n+i, s.n*s.d)
				}
				v, err := float32Of(s.h.number(el), int64(i), j)
				if err != nil {
					return err
				}
				s.whole[i*s.d+j] = v
			}
		}
		if err := drained(s.br, "the features"); err != nil {
			return err
		}
	}
	return nil
}

func (s *numpySource) next() (*rawBatch, error) {
	if s.row >= s.n {
		return nil, io.EOF
	}
	rows := min(parquetBatchRows, s.n-s.row)
	b := &rawBatch{dim: s.d, labels: make([]string, rows)}
	if s.whole != nil {
		b.features = slices.Clone(s.whole[s.row*s.d : (s.row+rows)*s.d])
	} else {
		b.features = make([]float32, rows*s.d)
		buf := make([]byte, s.d*s.h.size)
		for i := 0; i < rows; i++ {
			if _, err := io.ReadFull(s.br, buf); err != nil {
				return nil, fmt.Errorf("read %s: features truncated at row %d of %d", s.path, s.row+i, s.n)
			}
			out := b.features[i*s.d : (i+1)*s.d]
			if s.h.kind == 'f' && s.h.size == 4 && s.h.order == binary.LittleEndian {
				for j := range out {
					out[j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
				}
				continue
			}
			for j := range out {
				v, err := float32Of(s.h.number(buf[j*s.h.size:]), int64(s.row+i), j)
				if err != nil {
					return nil, fmt.Errorf("read %s: %w", s.path, err)
				}
				out[j] = v
			}
		}
	}
	if s.labels != nil {
		copy(b.labels, s.labels[s.row:])
		if s.null != nil {
			b.null = slices.Clone(s.null[s.row : s.row+rows])
		}
	} else {
		b.null = make([]bool, rows)
		for i := range b.null {
			b.null[i] = true
		}
	}
	if s.ids != nil {
		b.ids = slices.Clone(s.ids[s.row : s.row+rows])
	}
	s.row += rows
	if s.row == s.n && s.whole == nil {
		if err := drained(s.br, "the features"); err != nil {
			return nil, fmt.Errorf("read %s: %w", s.path, err)
		}
	}
	return b, nil
}

func (s *numpySource) dim() int        { return s.d }
func (s *numpySource) kind() labelKind { return s.lkind }
func (s *numpySource) meta() Metadata  { return s.md }
func (s *numpySource) hasIDs() bool    { return s.ids != nil }
func (s *numpySource) columns() string { return s.cols }

func (s *numpySource) close() error {
	if s.rc != nil {
		s.rc.Close()
		s.rc = nil
	}
	if s.zr != nil {
		s.zr.Close()
		s.zr = nil
	}
	return nil
}
