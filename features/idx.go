package features

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FashionMNISTClasses are Fashion-MNIST's class names (Xiao et al. 2017).
var FashionMNISTClasses = []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

// MNISTClasses are MNIST's class names.
var MNISTClasses = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

// idxHeader is the header of an IDX file of unsigned bytes.
type idxHeader struct {
	dims []int
}

// readIDXHeader reads the magic number (0, 0, type 0x08 = ubyte, number of
// dimensions) and the dimensions.
func readIDXHeader(r io.Reader, path string, wantDims int) (idxHeader, error) {
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return idxHeader{}, fmt.Errorf("read %s: too short for an IDX header: %v", path, err)
	}
	if magic[0] != 0 || magic[1] != 0 {
		return idxHeader{}, fmt.Errorf("read %s: not an IDX file (magic %x; expected 00 00 08 %02x)", path, magic, wantDims)
	}
	if magic[2] != 0x08 {
		return idxHeader{}, fmt.Errorf("read %s: IDX data type 0x%02x; expected 0x08 (unsigned bytes)", path, magic[2])
	}
	if int(magic[3]) != wantDims {
		return idxHeader{}, fmt.Errorf("read %s: IDX file of %d dimensions; expected %d", path, magic[3], wantDims)
	}
	h := idxHeader{dims: make([]int, wantDims)}
	for i := range h.dims {
		var d uint32
		if err := binary.Read(r, binary.BigEndian, &d); err != nil {
			return idxHeader{}, fmt.Errorf("read %s: truncated IDX header: %v", path, err)
		}
		if d == 0 || d > 1<<28 {
			return idxHeader{}, fmt.Errorf("read %s: IDX dimension %d is %d; expected 1 to %d", path, i, d, 1<<28)
		}
		h.dims[i] = int(d)
	}
	return h, nil
}

// openMaybeGzip opens a file, decompressing it if it starts with the gzip
// magic number.
func openMaybeGzip(path string) (io.Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	br := bufio.NewReaderSize(f, 1<<16)
	if head, _ := br.Peek(2); bytes.Equal(head, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("read %s: corrupt gzip stream: %v", path, err)
		}
		return bufio.NewReaderSize(zr, 1<<16), f, nil
	}
	return br, f, nil
}

// idxDataset reads an IDX pair: N×rows×cols images and N labels.
type idxDataset struct {
	imgPath, labPath string
	img, lab         io.Reader
	closers          []io.Closer
	n, rows, cols    int
	labels           []uint8
	classes          []string
	next             int
}

// labelsPath returns the labels file beside an images file:
// "…-images-idx3-ubyte[.gz]" → "…-labels-idx1-ubyte[.gz]" (either
// compression).
func labelsPath(images string) (string, error) {
	dir, base := filepath.Split(images)
	i := strings.Index(strings.ToLower(base), "images-idx3-ubyte")
	if i < 0 {
		return "", fmt.Errorf("read %s: cannot tell where the labels are; expected a name like train-images-idx3-ubyte[.gz]", images)
	}
	stem := base[:i] + "labels-idx1-ubyte"
	for _, cand := range []string{stem, stem + ".gz"} {
		if _, err := os.Stat(filepath.Join(dir, cand)); err == nil {
			return filepath.Join(dir, cand), nil
		}
	}
	return "", fmt.Errorf("read %s: no labels file %s[.gz] beside it", images, filepath.Join(dir, stem))
}

func openIDX(images string) (Dataset, error) {
	labels, err := labelsPath(images)
	if err != nil {
		return nil, err
	}
	d := &idxDataset{imgPath: images, labPath: labels}
	ok := false
	defer func() {
		if !ok {
			d.Close()
		}
	}()
	var c io.Closer
	if d.lab, c, err = openMaybeGzip(labels); err != nil {
		return nil, err
	}
	d.closers = append(d.closers, c)
	lh, err := readIDXHeader(d.lab, labels, 1)
	if err != nil {
		return nil, err
	}
	// Read as the data arrives rather than allocating what the header
	// claims: a corrupt header must not cost memory.
	if d.labels, err = io.ReadAll(io.LimitReader(d.lab, int64(lh.dims[0]))); err != nil || len(d.labels) != lh.dims[0] {
		return nil, fmt.Errorf("read %s: truncated: %d of %d labels present", labels, len(d.labels), lh.dims[0])
	}
	if d.img, c, err = openMaybeGzip(images); err != nil {
		return nil, err
	}
	d.closers = append(d.closers, c)
	ih, err := readIDXHeader(d.img, images, 3)
	if err != nil {
		return nil, err
	}
	d.n, d.rows, d.cols = ih.dims[0], ih.dims[1], ih.dims[2]
	if err := checkImageSize(d.cols, d.rows); err != nil {
		return nil, fmt.Errorf("read %s: %v", images, err)
	}
	if d.n != len(d.labels) {
		return nil, fmt.Errorf("read %s: %d images but %s has %d labels", images, d.n, labels, len(d.labels))
	}
	d.classes = MNISTClasses
	if strings.Contains(strings.ToLower(images), "fashion") {
		d.classes = FashionMNISTClasses
	}
	for i, l := range d.labels {
		if int(l) >= len(d.classes) {
			return nil, fmt.Errorf("read %s: example %d has a label outside 0..%d", labels, i, len(d.classes)-1)
		}
	}
	ok = true
	return d, nil
}

func (d *idxDataset) Classes() []string { return d.classes }
func (d *idxDataset) Len() int64        { return int64(d.n) }
func (d *idxDataset) Source() string    { return "IDX " + d.imgPath }

func (d *idxDataset) Close() error {
	for _, c := range d.closers {
		c.Close()
	}
	d.closers = nil
	return nil
}

func (d *idxDataset) Next() (Example, error) {
	if d.next >= d.n {
		return Example{}, io.EOF
	}
	i := d.next
	p := &Pixels{Width: d.cols, Height: d.rows, Channels: 1, Data: make([]uint8, d.rows*d.cols)}
	if _, err := io.ReadFull(d.img, p.Data); err != nil {
		return Example{}, fmt.Errorf("read %s: truncated at image %d; expected %d images of %d×%d (%v)", d.imgPath, i, d.n, d.rows, d.cols, err)
	}
	d.next++
	return Example{Pixels: p, Label: int32(d.labels[i]), Position: ExampleID(fmt.Sprintf("%s#%d", filepath.Base(d.imgPath), i)), Index: int64(i)}, nil
}
