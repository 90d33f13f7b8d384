package features

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // register the GIF decoder
	_ "image/jpeg" // register the JPEG decoder
	_ "image/png"  // register the PNG decoder

	_ "golang.org/x/image/bmp"  // register the BMP decoder
	_ "golang.org/x/image/tiff" // register the TIFF decoder
	_ "golang.org/x/image/webp" // register the WebP decoder
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Pixels is a decoded image: Height rows of Width pixels of Channels bytes
// (1 = grey, 3 = RGB), row-major, channels interleaved (HWC).
type Pixels struct {
	Width, Height, Channels int
	Data                    []uint8
}

// Example is one image of a dataset. Sources that store encoded images
// (folders, Hugging Face) fill Encoded and leave decoding to the caller, so
// that it can run in parallel; sources of raw pixels (IDX, CIFAR) fill Pixels.
type Example struct {
	Encoded []byte
	Pixels  *Pixels
	// Label is the class index, or Unlabeled.
	Label int32
	// ID names the example by the example alone: its path in an image
	// folder or Hugging Face row, and for a source that names examples
	// only by position (IDX, CIFAR, Hugging Face rows without a path) a
	// hash of its content (ContentID), with a counter only among exact
	// duplicates. Never its position: every per-row rule (split,
	// imbalance, validation) and every augmentation stream is keyed by
	// it, and removing one image once renumbered every later one.
	ID string
	// Position is a positional source's own name for the example
	// ("file#i"), which only DataIdentity reads (data identities, and so
	// the budget ledgers keyed by them, predate content ids).
	Position string
	// Index is the example's position in the dataset, from 0.
	Index int64
}

// Dataset is an iterator over the images of a source.
type Dataset interface {
	// Classes returns the class names; label i names Classes()[i].
	Classes() []string
	// Len returns the number of examples, or −1 where the source cannot
	// tell without reading it all.
	Len() int64
	// Next returns the next example, or io.EOF after the last one. Errors
	// name the file and the example at fault.
	Next() (Example, error)
	// Source describes what is read, for a feature file's dpfeat.source.
	Source() string
	Close() error
}

// DatasetOptions tunes OpenDataset.
type DatasetOptions struct {
	// Split selects a split where the source has several: "train" or
	// "test" for IDX and CIFAR folders, a sub-folder or file-name part for
	// Hugging Face folders. Empty means the source's only content, or
	// "train" for IDX and CIFAR folders.
	Split string
	// Classes pins the class list. For an image folder the classes are
	// exactly these names, in this order (a listed class without a folder
	// or images has no examples; a folder not listed is an error); for the
	// other formats they rename the source's classes, one for one.
	Classes []string
	// Expected, when Classes is not set, pins an image folder's classes
	// as Classes would (predict reads images with its classifier's
	// classes); the other formats keep their own names, which the caller
	// checks.
	Expected []string
}

// OpenDataset opens an image dataset, recognising its format from the path:
//   - a Hugging Face datasets Arrow file (*.arrow, IPC stream) or a folder of
//     them;
//   - IDX files (*-images-idx3-ubyte[.gz], with the labels file beside it),
//     or a folder holding train-/t10k- pairs;
//   - CIFAR-10/100 binary batches (*.bin), or a folder of them;
//   - an image folder root/<class>/*.{png,jpg,jpeg,gif,bmp,tif,tiff,webp}.
func OpenDataset(src string, opt DatasetOptions) (Dataset, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("open dataset %s: %w", src, err)
	}
	var ds Dataset
	if !st.IsDir() {
		switch name := strings.ToLower(filepath.Base(src)); {
		case strings.HasSuffix(name, ".arrow"), strings.HasSuffix(name, ".parquet"):
			ds, err = openHF([]string{src}, src)
		case strings.Contains(name, "idx3-ubyte"):
			ds, err = openIDX(src)
		case strings.HasSuffix(name, ".bin"):
			ds, err = openCIFAR([]string{src}, src)
		default:
			return nil, fmt.Errorf("open dataset %s: unknown format; expected a folder of class folders, a Hugging Face .arrow or .parquet file, an IDX *-images-idx3-ubyte[.gz] file or CIFAR .bin batches", src)
		}
	} else {
		ds, err = openDir(src, opt)
	}
	if err != nil {
		return nil, err
	}
	if _, folder := ds.(*imageFolder); !folder {
		ds = &exampleIDs{Dataset: ds, hashes: map[uint64]uint32{}, names: map[string]uint32{}}
	}
	if _, folder := ds.(*imageFolder); opt.Classes != nil && !folder {
		if n := len(ds.Classes()); n != 0 && n != len(opt.Classes) {
			ds.Close()
			return nil, fmt.Errorf("open dataset %s: %d class names given, the dataset has %d classes", src, len(opt.Classes), n)
		}
		ds = renamed{ds, opt.Classes}
	}
	if ds.Len() == 0 {
		ds.Close()
		return nil, fmt.Errorf("open dataset %s: no examples", src)
	}
	return ds, nil
}

// ContentID names an example by its content: "sha256:" and 20 hex digits
// (80 bits) of the SHA-256 of its label and its pixels (their size and
// bytes) or its encoded bytes. It depends on the example alone.
func ContentID(ex Example) string {
	return contentIDPrefix + hex.EncodeToString(contentHash(ex)[:10])
}

const contentIDPrefix = "sha256:"

// IsContentID reports whether an id is a ContentID (with or without a
// duplicate's counter): one that names the same label and pixels
// wherever it appears.
func IsContentID(id string) bool { return strings.HasPrefix(id, contentIDPrefix) }

func contentHash(ex Example) []byte {
	h := sha256.New()
	var buf [8]byte
	binary.LittleEndian.PutUint32(buf[:4], uint32(ex.Label))
	h.Write(buf[:4])
	if p := ex.Pixels; p != nil {
		fmt.Fprintf(h, "pixels %dx%dx%d:", p.Width, p.Height, p.Channels)
		h.Write(p.Data)
	} else {
		h.Write([]byte("encoded:"))
		h.Write(ex.Encoded)
	}
	return h.Sum(nil)
}

// exampleIDs names the examples of every source but an image folder (whose
// relative paths are unique and belong to the example): a content id where
// the source has no name of its own, and a counter ("#2", "#3", …) only
// where an id repeats — among exact duplicates, or Hugging Face rows of one
// path — so that ids are unique and an example's id moves only when an
// identical example before it comes or goes.
type exampleIDs struct {
	Dataset
	hashes map[uint64]uint32
	names  map[string]uint32
}

func (d *exampleIDs) Next() (Example, error) {
	ex, err := d.Dataset.Next()
	if err != nil {
		return ex, err
	}
	var seen uint32
	if ex.ID == "" {
		sum := contentHash(ex)
		ex.ID = contentIDPrefix + hex.EncodeToString(sum[:10])
		k := binary.LittleEndian.Uint64(sum)
		seen = d.hashes[k]
		d.hashes[k] = seen + 1
	} else {
		seen = d.names[ex.ID]
		d.names[ex.ID] = seen + 1
	}
	if seen > 0 {
		ex.ID += "#" + strconv.FormatUint(uint64(seen)+1, 10)
	}
	return ex, nil
}

type renamed struct {
	Dataset
	classes []string
}

func (r renamed) Classes() []string { return r.classes }

func openDir(dir string, opt DatasetOptions) (Dataset, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("open dataset %s: %w", dir, err)
	}
	var arrows, idx, bins []string
	subdirs := map[string]bool{}
	for _, e := range ents {
		n := e.Name()
		ln := strings.ToLower(n)
		switch {
		case e.IsDir():
			subdirs[n] = true
		case strings.HasSuffix(ln, ".arrow"), strings.HasSuffix(ln, ".parquet"):
			// Hugging Face shards: save_to_disk's Arrow, the Hub's Parquet.
			arrows = append(arrows, filepath.Join(dir, n))
		case strings.Contains(ln, "images-idx3-ubyte"):
			idx = append(idx, filepath.Join(dir, n))
		case strings.HasSuffix(ln, ".bin"):
			bins = append(bins, filepath.Join(dir, n))
		}
	}
	sort.Strings(arrows)
	sort.Strings(idx)
	sort.Strings(bins)
	split := opt.Split
	// A Hub repository keeps its shards in data/.
	if len(arrows)+len(idx)+len(bins) == 0 && subdirs["data"] && hasArrow(filepath.Join(dir, "data")) && !subdirs[split] {
		return openDir(filepath.Join(dir, "data"), opt)
	}
	// A DatasetDict saved by datasets' save_to_disk: one folder per split,
	// listed in dataset_dict.json. Without --split it is not an image
	// folder whose classes are train and test.
	if splits, ok := datasetDictSplits(dir); ok && len(arrows) == 0 && (split == "" || !subdirs[split]) {
		if split == "" {
			return nil, fmt.Errorf("open dataset %s: a Hugging Face DatasetDict with splits %s; pass --split with one of them", dir, strings.Join(splits, ", "))
		}
		return nil, fmt.Errorf("open dataset %s: the DatasetDict has no split %q (it has %s)", dir, split, strings.Join(splits, ", "))
	}
	switch {
	case len(idx) > 0:
		if split == "" {
			split = "train"
		}
		prefix := map[string]string{"train": "train-", "test": "t10k-"}[split]
		if prefix == "" {
			return nil, fmt.Errorf("open dataset %s: IDX folders have splits train and test, not %q", dir, split)
		}
		for _, p := range idx {
			if strings.HasPrefix(strings.ToLower(filepath.Base(p)), prefix) {
				return openIDX(p)
			}
		}
		return nil, fmt.Errorf("open dataset %s: no %simages-idx3-ubyte[.gz] for split %q", dir, prefix, split)
	case len(bins) > 0:
		if split == "" {
			split = "train"
		}
		var pick []string
		for _, p := range bins {
			b := strings.ToLower(filepath.Base(p))
			isTest := strings.HasPrefix(b, "test")
			if (split == "test") == isTest && (split == "test" || split == "train") {
				pick = append(pick, p)
			}
		}
		if len(pick) == 0 {
			return nil, fmt.Errorf("open dataset %s: no CIFAR batches for split %q (train: data_batch_*.bin or train.bin; test: test_batch.bin or test.bin)", dir, split)
		}
		return openCIFAR(pick, dir)
	case len(arrows) > 0 || (split != "" && subdirs[split] && hasArrow(filepath.Join(dir, split))):
		if split != "" && subdirs[split] {
			return openDir(filepath.Join(dir, split), DatasetOptions{})
		}
		if split != "" {
			var pick []string
			for _, p := range arrows {
				b := filepath.Base(p)
				if strings.Contains(b, "-"+split+".") || strings.Contains(b, "-"+split+"-") || strings.HasPrefix(b, split+"-") {
					pick = append(pick, p)
				}
			}
			if len(pick) == 0 {
				return nil, fmt.Errorf("open dataset %s: no shard for split %q (shards: %s)", dir, split, shardNames(arrows))
			}
			arrows = pick
		} else if splits := shardSplits(arrows); len(splits) > 1 {
			return nil, fmt.Errorf("open dataset %s: shards of splits %s; pass --split with one of them", dir, strings.Join(splits, ", "))
		}
		return openHF(arrows, dir)
	}
	pinned := opt.Classes
	if pinned == nil {
		pinned = opt.Expected
	}
	return openImageFolder(dir, pinned)
}

// datasetDictSplits reads the splits a DatasetDict folder lists in its
// dataset_dict.json; false when there is none.
func datasetDictSplits(dir string) ([]string, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "dataset_dict.json"))
	if err != nil {
		return nil, false
	}
	var dd struct {
		Splits []string `json:"splits"`
	}
	if json.Unmarshal(b, &dd) != nil || len(dd.Splits) == 0 {
		return nil, false
	}
	return dd.Splits, true
}

// hasArrow reports whether dir holds Hugging Face shards (.arrow or
// .parquet).
func hasArrow(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.arrow"))
	p, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	return len(m)+len(p) > 0
}

// hubShard matches the Hub's shard names: SPLIT-00000-of-00002[-hash].parquet.
var hubShard = regexp.MustCompile(`^([A-Za-z0-9_.]+)-\d{5}-of-\d{5}`)

// shardSplits returns the splits that Hub-named shards belong to.
func shardSplits(files []string) []string {
	var out []string
	for _, f := range files {
		if m := hubShard.FindStringSubmatch(filepath.Base(f)); m != nil && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

func shardNames(files []string) string {
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	return strings.Join(names, ", ")
}

// maxPixels refuses images whose header claims more than this many pixels
// before decoding them (a decompression bomb would otherwise take the
// machine's memory), and maxSide longer sides than JPEG allows (an image of
// one column and 10⁸ rows, squashed to the encoder's size, would cost its
// preprocessing tens of gigabytes).
const (
	maxPixels = 100 << 20
	maxSide   = 1<<16 - 1
)

// checkImageSize is the one rule for an image's claimed size.
func checkImageSize(w, h int) error {
	if w <= 0 || h <= 0 || w > maxSide || h > maxSide || int64(w)*int64(h) > maxPixels {
		return fmt.Errorf("image of %d×%d pixels; expected sides of 1 to %d and at most %d pixels", w, h, maxSide, maxPixels)
	}
	return nil
}

// DecodeImage returns the pixels of an example: its Pixels if the source
// stored raw pixels, else its PNG or JPEG bytes decoded to grey (1 channel)
// or RGB (3 channels; alpha is dropped).
func DecodeImage(ex Example) (Pixels, error) {
	if ex.Pixels != nil {
		return *ex.Pixels, nil
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(ex.Encoded))
	if err != nil {
		return Pixels{}, fmt.Errorf("decode %s: not an image dpfeat reads (PNG, JPEG, GIF, BMP, TIFF, WebP): %v", ex.ID, err)
	}
	if err := checkImageSize(cfg.Width, cfg.Height); err != nil {
		return Pixels{}, fmt.Errorf("decode %s: %s %v", ex.ID, format, err)
	}
	img, _, err := image.Decode(bytes.NewReader(ex.Encoded))
	if err != nil {
		return Pixels{}, fmt.Errorf("decode %s: %s image does not decode: %v", ex.ID, format, err)
	}
	return toPixels(img), nil
}

func toPixels(img image.Image) Pixels {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	switch m := img.(type) {
	case *image.Gray:
		p := Pixels{Width: w, Height: h, Channels: 1, Data: make([]uint8, w*h)}
		for y := 0; y < h; y++ {
			copy(p.Data[y*w:(y+1)*w], m.Pix[(y)*m.Stride:(y)*m.Stride+w])
		}
		return p
	case *image.Gray16:
		p := Pixels{Width: w, Height: h, Channels: 1, Data: make([]uint8, w*h)}
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				p.Data[y*w+x] = uint8(m.Gray16At(b.Min.X+x, b.Min.Y+y).Y >> 8)
			}
		}
		return p
	case *image.YCbCr:
		return rgbFromYCbCr(m)
	case *image.NRGBA:
		return rgbFrom4(m.Pix, m.Stride, w, h)
	case *image.RGBA:
		if m.Opaque() {
			return rgbFrom4(m.Pix, m.Stride, w, h)
		}
	}
	p := Pixels{Width: w, Height: h, Channels: 3, Data: make([]uint8, w*h*3)}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.NRGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
			i := (y*w + x) * 3
			p.Data[i], p.Data[i+1], p.Data[i+2] = c.R, c.G, c.B
		}
	}
	return p
}

// rgbFrom4 drops the alpha byte of 4-byte pixels.
func rgbFrom4(pix []uint8, stride, w, h int) Pixels {
	p := Pixels{Width: w, Height: h, Channels: 3, Data: make([]uint8, w*h*3)}
	for y := 0; y < h; y++ {
		row := pix[y*stride:]
		for x := 0; x < w; x++ {
			copy(p.Data[(y*w+x)*3:(y*w+x)*3+3], row[x*4:x*4+3])
		}
	}
	return p
}

// DataIdentity returns the identity of the examples a dataset yields from
// offset on (limit of them; 0: all): "data:sha256:" and the SHA-256 of
// every example's id, label and encoded bytes (or decoded pixels), in
// order. It reads the
// dataset to its end; open it again to extract. The same examples give the
// same identity whatever encoder later reads them, which is what lets
// budget ledgers follow the data rather than one file's bytes.
func DataIdentity(ds Dataset, offset, limit int64) (string, error) {
	h := sha256.New()
	var buf [8]byte
	for i := int64(0); limit <= 0 || i < offset+limit; i++ {
		ex, err := ds.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		if i < offset {
			continue
		}
		var px []byte
		if p := ex.Pixels; p != nil {
			px = fmt.Appendf(nil, "%dx%dx%d:", p.Width, p.Height, p.Channels)
			px = append(px, p.Data...)
		}
		id := ex.ID
		if ex.Position != "" {
			id = ex.Position
		}
		for _, part := range [][]byte{[]byte(id), ex.Encoded, px} {
			binary.LittleEndian.PutUint64(buf[:], uint64(len(part)))
			h.Write(buf[:])
			h.Write(part)
		}
		binary.LittleEndian.PutUint32(buf[:4], uint32(ex.Label))
		h.Write(buf[:4])
	}
	return "data:sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// rgbFromYCbCr converts a decoded JPEG to RGB pixels with
// color.YCbCrToRGB, as YCbCrAt would, reading the planes row by row (the
// chroma column of each pixel from the subsampling ratio) instead of
// through YCbCrAt's per-pixel offsets: the same bytes, at several times
// the speed.
func rgbFromYCbCr(m *image.YCbCr) Pixels {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	p := Pixels{Width: w, Height: h, Channels: 3, Data: make([]uint8, w*h*3)}
	var hshift, vshift int // chroma subsampling, as powers of two
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio444:
	case image.YCbCrSubsampleRatio422:
		hshift = 1
	case image.YCbCrSubsampleRatio420:
		hshift, vshift = 1, 1
	case image.YCbCrSubsampleRatio440:
		vshift = 1
	default: // 4:1:1, 4:1:0: rare; per pixel
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				c := m.YCbCrAt(b.Min.X+x, b.Min.Y+y)
				i := (y*w + x) * 3
				p.Data[i], p.Data[i+1], p.Data[i+2] = color.YCbCrToRGB(c.Y, c.Cb, c.Cr)
			}
		}
		return p
	}
	for y := 0; y < h; y++ {
		sy := b.Min.Y + y
		yrow := m.Y[(sy-m.Rect.Min.Y)*m.YStride+(b.Min.X-m.Rect.Min.X):]
		crow := (sy>>vshift - m.Rect.Min.Y>>vshift) * m.CStride
		cx0 := m.Rect.Min.X >> hshift
		out := p.Data[y*w*3 : (y+1)*w*3]
		last := -1
		var rc, gc, bc int32 // the chroma terms, shared by the pixels of one chroma sample
		for x := 0; x < w; x++ {
			if ci := crow + (b.Min.X+x)>>hshift - cx0; ci != last {
				cb1, cr1 := int32(m.Cb[ci])-128, int32(m.Cr[ci])-128
				rc, gc, bc = 91881*cr1, -22554*cb1-46802*cr1, 116130*cb1
				last = ci
			}
			// color.YCbCrToRGB's integer arithmetic, term for term.
			yy1 := int32(yrow[x]) * 0x10101
			out[3*x], out[3*x+1], out[3*x+2] = clamp16(yy1+rc), clamp16(yy1+gc), clamp16(yy1+bc)
		}
	}
	return p
}

// clamp16 is v >> 16 clamped to [0, 255], as color.YCbCrToRGB computes it.
func clamp16(v int32) uint8 {
	if uint32(v)&0xff000000 == 0 {
		return uint8(v >> 16)
	}
	return uint8(^(v >> 31))
}
