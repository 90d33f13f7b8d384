// Package badinputs writes a slice of the bad-input corpus that dpfeat's
// readers must refuse in one line, without allocating what the file
// claims: NumPy archives that lie about their sizes, decompression bombs,
// damaged checksums, an IDX image bomb, a manifest of too many shards.
// The features tests open each one; the command-line tests run them
// through the binary under an address-space limit (ulimit -v).
package badinputs

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
)

// Case is one bad input: the file (relative to the corpus folder) and a
// phrase the one-line refusal must contain.
type Case struct {
	Name, File, Want string
	// Extract is set for image sources (run through extract, not read as
	// features).
	Extract bool
}

// NPY returns an .npy array's bytes: its header (descr, Fortran order,
// shape) and data.
func NPY(descr string, fortran bool, shape []int, data []byte) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	sh := strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	ft := "False"
	if fortran {
		ft = "True"
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }", descr, ft, sh)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
	return append(append(b, h...), data...)
}

// entry is one array of an archive: stored or deflated, with the sizes
// and checksum its directory claims (zero: the true ones).
type entry struct {
	name             string
	data             []byte
	deflate          bool
	claimSize        uint64
	wrongCRC         bool
	compressedLength int // keep only this many compressed bytes (0: all)
}

func writeNPZ(path string, entries ...entry) error {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		raw, method := e.data, zip.Store
		if e.deflate {
			var c bytes.Buffer
			fw, _ := flate.NewWriter(&c, flate.BestSpeed)
			fw.Write(e.data)
			fw.Close()
			raw, method = c.Bytes(), zip.Deflate
		}
		if e.compressedLength > 0 && e.compressedLength < len(raw) {
			raw = raw[:e.compressedLength]
		}
		h := &zip.FileHeader{Name: e.name + ".npy", Method: method, CRC32: crc32.ChecksumIEEE(e.data),
			CompressedSize64: uint64(len(raw)), UncompressedSize64: uint64(len(e.data))}
		if e.claimSize > 0 {
			h.UncompressedSize64 = e.claimSize
		}
		if e.wrongCRC {
			h.CRC32 ^= 0xdeadbeef
		}
		w, err := zw.CreateRaw(h)
		if err != nil {
			return err
		}
		w.Write(raw)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func floats(n int) []byte { return make([]byte, 4*n) }

func int64s(n int) []byte { return make([]byte, 8*n) }

// Write writes the corpus into dir and returns its cases. labelBomb is the
// label count of the real decompression bomb (3·10⁸ in the issue that
// found it; fewer keep a test quick).
func Write(dir string, labelBomb int) ([]Case, error) {
	x := entry{name: "X", data: NPY("<f4", false, []int{40, 2}, floats(80))}
	y := entry{name: "y", data: NPY("<i8", false, []int{40}, int64s(40))}
	var cases []Case
	add := func(name, file, want string, err error) error {
		cases = append(cases, Case{Name: name, File: file, Want: want})
		return err
	}
	// A label dtype of 10¹² characters, for no rows: 4 TB for one element.
	if err := add("huge label dtype", "udtype.npz", "expected at most", writeNPZ(filepath.Join(dir, "udtype.npz"),
		entry{name: "X", data: NPY("<f4", false, []int{1, 2}, floats(2))},
		entry{name: "y", data: NPY("<U1000000000000", false, []int{0}, nil)})); err != nil {
		return nil, err
	}
	// A directory that claims 8 GB of labels behind 100 compressed bytes.
	claim := NPY("<i8", false, []int{1000000000}, int64s(64))
	if err := add("labels claimed by the zip directory", "claims.npz", "more than DEFLATE can expand", writeNPZ(filepath.Join(dir, "claims.npz"),
		x, entry{name: "y", data: claim, deflate: true, claimSize: 8_000_000_128})); err != nil {
		return nil, err
	}
	// 1.9·10⁸ × 5 Fortran-order features claimed by a 1.5 KB archive.
	fx := NPY("<f4", true, []int{190000000, 5}, floats(256))
	if err := add("Fortran features claimed by a small archive", "fortran.npz", "more than DEFLATE can expand", writeNPZ(filepath.Join(dir, "fortran.npz"),
		entry{name: "X", data: fx, deflate: true, claimSize: 3_800_000_128}, y)); err != nil {
		return nil, err
	}
	// A real deflate bomb: labelBomb labels for 40 rows.
	if err := add("a deflate bomb of labels", "bomb.npz", fmt.Sprintf("holds %d elements for 40 rows", labelBomb), writeNPZ(filepath.Join(dir, "bomb.npz"),
		x, entry{name: "y", data: NPY("<i8", false, []int{labelBomb}, int64s(labelBomb)), deflate: true})); err != nil {
		return nil, err
	}
	// An entry whose bytes fail its CRC-32.
	if err := add("a damaged entry", "crc.npz", "CRC-32", writeNPZ(filepath.Join(dir, "crc.npz"), x, entry{name: "y", data: y.data, wrongCRC: true})); err != nil {
		return nil, err
	}
	// Features whose entry is cut short of its claimed size.
	if err := add("a truncated entry", "cut.npz", "", writeNPZ(filepath.Join(dir, "cut.npz"),
		entry{name: "X", data: x.data, deflate: true, compressedLength: 20}, y)); err != nil {
		return nil, err
	}
	// A manifest of more shards than a manifest may list.
	shards := make([]map[string]any, 20000)
	for i := range shards {
		shards[i] = map[string]any{"path": "s.arrow", "rows": 1}
	}
	mb, _ := json.Marshal(map[string]any{"format": "dpfeat.shards.v1", "rows": len(shards), "dim": 4, "shards": shards})
	if err := add("a manifest of 20,000 shards", "many.json", "at most 16384", os.WriteFile(filepath.Join(dir, "many.json"), mb, 0o644)); err != nil {
		return nil, err
	}
	// A shard path that climbs out of the manifest's folder.
	mb, _ = json.Marshal(map[string]any{"format": "dpfeat.shards.v1", "rows": 1, "dim": 4, "shards": []map[string]any{{"path": "../secret.arrow", "rows": 1}}})
	if err := add("a shard path that climbs out", "climb.json", "leaves the manifest's folder", os.WriteFile(filepath.Join(dir, "climb.json"), mb, 0o644)); err != nil {
		return nil, err
	}
	return cases, nil
}

// WriteIDXBomb writes an IDX source of three images of 10240×10240 (10⁸
// pixels each, the most an image may have), gzipped to 300 KB, into dir:
// extracting it must stay within a few hundred megabytes (the pixels once
// became 1.2 GB of float planes per decode worker).
func WriteIDXBomb(dir string) (Case, error) {
	idx := filepath.Join(dir, "bomb-idx")
	if err := os.MkdirAll(idx, 0o755); err != nil {
		return Case{}, err
	}
	var img, lab bytes.Buffer
	gw := gzip.NewWriter(&img)
	head := binary.BigEndian.AppendUint32(nil, 0x803)
	for _, d := range []uint32{3, 10240, 10240} {
		head = binary.BigEndian.AppendUint32(head, d)
	}
	gw.Write(head)
	zero := make([]byte, 1<<20)
	for i := 0; i < 3*100; i++ {
		gw.Write(zero)
	}
	gw.Close()
	lw := gzip.NewWriter(&lab)
	lw.Write(append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 0x801), 3), 0, 1, 2))
	lw.Close()
	os.WriteFile(filepath.Join(idx, "train-images-idx3-ubyte.gz"), img.Bytes(), 0o644)
	c := Case{Name: "an IDX image bomb", File: "bomb-idx/train-images-idx3-ubyte.gz", Extract: true}
	return c, os.WriteFile(filepath.Join(idx, "train-labels-idx1-ubyte.gz"), lab.Bytes(), 0o644)
}
