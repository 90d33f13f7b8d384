package features

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// The Arrow library trusts the lengths written in an IPC file's flatbuffer
// metadata and allocates by them, so a corrupt length can ask for terabytes
// and kill the process before any error is returned. checkIPC walks the
// footer, the schema and every record-batch header first, with bounds checks
// on every table, vector and string against the bytes actually present, and
// refuses compressed bodies (whose decompressed size is another such
// length). Only files that pass are handed to the Arrow reader.
//
// Layouts follow the Arrow columnar format's File.fbs, Schema.fbs and
// Message.fbs.

const (
	maxFields     = 1 << 12 // fields, nested included
	maxFieldDepth = 32
	maxBatches    = 1 << 24
	maxMetadata   = 1 << 16 // key/value pairs
	blockSize     = 24      // struct Block { offset: long; metaDataLength: int; (pad); bodyLength: long }
	fieldNodeSize = 16      // struct FieldNode { length: long; null_count: long }
	bufferSize    = 16      // struct Buffer { offset: long; length: long }
)

// fb is a flatbuffer with bounds-checked access.
type fb []byte

func (b fb) u32(pos int) (uint32, error) {
	if pos < 0 || pos+4 > len(b) {
		return 0, fmt.Errorf("offset %d out of bounds (%d bytes)", pos, len(b))
	}
	return binary.LittleEndian.Uint32(b[pos:]), nil
}

func (b fb) u16(pos int) (uint16, error) {
	if pos < 0 || pos+2 > len(b) {
		return 0, fmt.Errorf("offset %d out of bounds (%d bytes)", pos, len(b))
	}
	return binary.LittleEndian.Uint16(b[pos:]), nil
}

// table checks the table at pos and returns a field accessor: the position
// of field i, or 0 if absent.
func (b fb) table(pos int) (func(i int) (int, error), error) {
	so, err := b.u32(pos)
	if err != nil {
		return nil, err
	}
	vt := pos - int(int32(so))
	vsize, err := b.u16(vt)
	if err != nil {
		return nil, fmt.Errorf("vtable: %w", err)
	}
	tsize, err := b.u16(vt + 2)
	if err != nil {
		return nil, fmt.Errorf("vtable: %w", err)
	}
	if vsize < 4 || vsize%2 != 0 || vt+int(vsize) > len(b) || pos+int(tsize) > len(b) {
		return nil, fmt.Errorf("table at %d has a vtable out of bounds", pos)
	}
	return func(i int) (int, error) {
		if 4+2*i+2 > int(vsize) {
			return 0, nil
		}
		off, _ := b.u16(vt + 4 + 2*i)
		if off == 0 {
			return 0, nil
		}
		if int(off) >= int(tsize) {
			return 0, fmt.Errorf("field %d of table at %d lies outside the table", i, pos)
		}
		return pos + int(off), nil
	}, nil
}

// deref follows the uoffset at pos.
func (b fb) deref(pos int) (int, error) {
	o, err := b.u32(pos)
	if err != nil {
		return 0, err
	}
	t := pos + int(o)
	if int(o) < 0 || t >= len(b) {
		return 0, fmt.Errorf("offset at %d points outside the buffer", pos)
	}
	return t, nil
}

// vector returns the element start and count of the vector referenced at
// pos, checking that count·elem bytes are present.
func (b fb) vector(pos, elem, max int) (int, int, error) {
	v, err := b.deref(pos)
	if err != nil {
		return 0, 0, err
	}
	n, err := b.u32(v)
	if err != nil {
		return 0, 0, err
	}
	if int64(n) > int64(max) || int64(v)+4+int64(n)*int64(elem) > int64(len(b)) {
		return 0, 0, fmt.Errorf("vector at %d claims %d elements; the buffer holds at most %d", v, n, (len(b)-v-4)/elem)
	}
	return v + 4, int(n), nil
}

// tables checks a vector of tables at pos with check applied to each.
func (b fb) tables(pos, max int, check func(int) error) error {
	start, n, err := b.vector(pos, 4, max)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		t, err := b.deref(start + 4*i)
		if err != nil {
			return err
		}
		if err := check(t); err != nil {
			return err
		}
	}
	return nil
}

func (b fb) str(pos int) error {
	_, _, err := b.vector(pos, 1, len(b))
	return err
}

// keyValues checks a custom_metadata vector at field position pos.
func (b fb) keyValues(pos int) error {
	if pos == 0 {
		return nil
	}
	return b.tables(pos, maxMetadata, func(t int) error {
		field, err := b.table(t)
		if err != nil {
			return err
		}
		for i := 0; i < 2; i++ {
			p, err := field(i)
			if err != nil {
				return err
			}
			if p != 0 {
				if err := b.str(p); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// field checks a Schema.fbs Field table and its children.
func (b fb) field(t, depth int, count *int) error {
	*count++
	if *count > maxFields || depth > maxFieldDepth {
		return fmt.Errorf("schema nests more than %d fields or %d levels", maxFields, maxFieldDepth)
	}
	field, err := b.table(t)
	if err != nil {
		return err
	}
	// 0 name, 3 type (union table), 4 dictionary, 5 children, 6 custom_metadata
	if p, err := field(0); err != nil {
		return err
	} else if p != 0 {
		if err := b.str(p); err != nil {
			return err
		}
	}
	for _, i := range []int{3, 4} {
		p, err := field(i)
		if err != nil {
			return err
		}
		if p != 0 {
			sub, err := b.deref(p)
			if err != nil {
				return err
			}
			if _, err := b.table(sub); err != nil {
				return err
			}
		}
	}
	if p, err := field(5); err != nil {
		return err
	} else if p != 0 {
		if err := b.tables(p, maxFields, func(c int) error { return b.field(c, depth+1, count) }); err != nil {
			return err
		}
	}
	p, err := field(6)
	if err != nil {
		return err
	}
	return b.keyValues(p)
}

// maxMetaBytes bounds one flatbuffer metadata block (footer or message
// header); feature files have a few kilobytes.
const maxMetaBytes = 64 << 20

// checkIPC validates the footer, schema, dictionary and record-batch
// headers of an Arrow IPC file of the given size; read returns n bytes at
// off. It reports how many dictionary batches the file has (a dpfeat
// feature file has none).
func checkIPC(read func(off, n int64) ([]byte, error), size int64) (dictionaries int, err error) {
	if size < 6+4+8 {
		return 0, fmt.Errorf("too short")
	}
	tail, err := read(size-10, 4)
	if err != nil {
		return 0, err
	}
	flen := int64(int32(binary.LittleEndian.Uint32(tail)))
	if flen <= 0 || flen > size-10-8 || flen > maxMetaBytes {
		return 0, fmt.Errorf("footer length %d does not fit the file", flen)
	}
	fbytes, err := read(size-10-flen, flen)
	if err != nil {
		return 0, err
	}
	foot := fb(fbytes)
	root, err := foot.deref(0)
	if err != nil {
		return 0, fmt.Errorf("footer: %w", err)
	}
	footer, err := foot.table(root)
	if err != nil {
		return 0, fmt.Errorf("footer: %w", err)
	}
	// Footer: 0 version, 1 schema, 2 dictionaries, 3 recordBatches, 4 custom_metadata
	sp, err := footer(1)
	if err != nil || sp == 0 {
		return 0, fmt.Errorf("footer has no schema")
	}
	st, err := foot.deref(sp)
	if err != nil {
		return 0, fmt.Errorf("schema: %w", err)
	}
	if err := checkSchemaTable(foot, st); err != nil {
		return 0, err
	}
	// Dictionary batches (another writer's dictionary-encoded labels) are
	// checked as record batches are; a feature file's own schema has no
	// dictionary-encoded column (checkSchema).
	if p, err := footer(2); err != nil {
		return 0, err
	} else if p != 0 {
		start, nd, err := foot.vector(p, blockSize, maxBatches)
		if err != nil {
			return 0, fmt.Errorf("dictionaries: %w", err)
		}
		if err := checkBlocks(read, size, foot[start:start+nd*blockSize], nd, "dictionary batch"); err != nil {
			return 0, err
		}
		dictionaries = nd
	}
	if p, err := footer(4); err != nil {
		return 0, err
	} else if err := foot.keyValues(p); err != nil {
		return 0, fmt.Errorf("footer metadata: %w", err)
	}
	bp, err := footer(3)
	if err != nil {
		return 0, err
	}
	if bp == 0 {
		return dictionaries, nil
	}
	start, nb, err := foot.vector(bp, blockSize, maxBatches)
	if err != nil {
		return 0, fmt.Errorf("record batch index: %w", err)
	}
	return dictionaries, checkBlocks(read, size, foot[start:start+nb*blockSize], nb, "record batch")
}

// checkBlocks checks the n messages a file's footer indexes (Block
// structs in blocks): record batches, or dictionary batches.
func checkBlocks(read func(off, n int64) ([]byte, error), size int64, blocks fb, n int, what string) error {
	for i := 0; i < n; i++ {
		blk := blocks[i*blockSize:]
		off := int64(binary.LittleEndian.Uint64(blk))
		meta := int64(int32(binary.LittleEndian.Uint32(blk[8:])))
		body := int64(binary.LittleEndian.Uint64(blk[16:]))
		if off < 8 || meta < 8 || meta > maxMetaBytes || body < 0 || off+meta+body > size || off+meta+body < off {
			return fmt.Errorf("%s %d lies outside the file", what, i)
		}
		m, err := read(off, meta)
		if err != nil {
			return err
		}
		if err := checkMessage(m, body, what == "dictionary batch"); err != nil {
			return fmt.Errorf("%s %d: %w", what, i, err)
		}
	}
	return nil
}

// checkMessage validates one encapsulated record-batch message header, or
// with dictionary a dictionary batch's (whose data is a record batch).
func checkMessage(m []byte, bodyLen int64, dictionary bool) error {
	p := 0
	if len(m) >= 4 && binary.LittleEndian.Uint32(m) == 0xFFFFFFFF {
		p = 4
	}
	if len(m) < p+4 {
		return fmt.Errorf("message too short")
	}
	mlen := int(int32(binary.LittleEndian.Uint32(m[p:])))
	if mlen <= 0 || p+4+mlen > len(m) {
		return fmt.Errorf("message length %d does not fit", mlen)
	}
	b := fb(m[p+4 : p+4+mlen])
	root, err := b.deref(0)
	if err != nil {
		return err
	}
	msg, err := b.table(root)
	if err != nil {
		return err
	}
	// Message: 0 version, 1 header_type, 2 header, 3 bodyLength, 4 custom_metadata
	ht, err := msg(1)
	if err != nil {
		return err
	}
	want := byte(3) // MessageHeader.RecordBatch
	if dictionary {
		want = 2 // MessageHeader.DictionaryBatch
	}
	if ht == 0 || ht >= len(b) || b[ht] != want {
		return fmt.Errorf("not a %s message", map[bool]string{false: "record batch", true: "dictionary batch"}[dictionary])
	}
	hp, err := msg(2)
	if err != nil || hp == 0 {
		return fmt.Errorf("record batch message without header")
	}
	if bl, err := msg(3); err != nil {
		return err
	} else if bl != 0 {
		if bl+8 > len(b) {
			return fmt.Errorf("body length out of bounds")
		}
		if v := int64(binary.LittleEndian.Uint64(b[bl:])); v != bodyLen {
			return fmt.Errorf("body length %d disagrees with the file index (%d)", v, bodyLen)
		}
	}
	if p, err := msg(4); err != nil {
		return err
	} else if err := b.keyValues(p); err != nil {
		return err
	}
	rt, err := b.deref(hp)
	if err != nil {
		return err
	}
	if dictionary {
		// DictionaryBatch: 0 id, 1 data (a RecordBatch), 2 isDelta
		dict, err := b.table(rt)
		if err != nil {
			return err
		}
		dp, err := dict(1)
		if err != nil || dp == 0 {
			return fmt.Errorf("dictionary batch without data")
		}
		if rt, err = b.deref(dp); err != nil {
			return err
		}
	}
	rb, err := b.table(rt)
	if err != nil {
		return err
	}
	// RecordBatch: 0 length, 1 nodes, 2 buffers, 3 compression, 4 variadicBufferCounts
	if lp, err := rb(0); err != nil {
		return err
	} else if lp != 0 {
		if lp+8 > len(b) {
			return fmt.Errorf("row count out of bounds")
		}
		if rows := int64(binary.LittleEndian.Uint64(b[lp:])); rows < 0 || rows > bodyLen*8+64 {
			return fmt.Errorf("claims %d rows in a body of %d bytes", rows, bodyLen)
		}
	}
	for i, size := range map[int]int{1: fieldNodeSize, 2: bufferSize} {
		vp, err := rb(i)
		if err != nil {
			return err
		}
		if vp == 0 {
			continue
		}
		start, n, err := b.vector(vp, size, maxFields*4)
		if err != nil {
			return err
		}
		for j := 0; j < n; j++ {
			e := b[start+j*size:]
			x, y := int64(binary.LittleEndian.Uint64(e)), int64(binary.LittleEndian.Uint64(e[8:]))
			if i == 1 && (x < 0 || y < 0 || y > x || x > bodyLen*8+64) {
				return fmt.Errorf("field node %d claims %d values (%d null) in a body of %d bytes", j, x, y, bodyLen)
			}
			if i == 2 && (x < 0 || y < 0 || x+y > bodyLen || x+y < x) {
				return fmt.Errorf("buffer %d [%d, +%d) lies outside the body of %d bytes", j, x, y, bodyLen)
			}
		}
	}
	if cp, err := rb(3); err != nil {
		return err
	} else if cp != 0 {
		return fmt.Errorf("compressed record batches are not supported in feature files; rewrite the file uncompressed")
	}
	if vp, err := rb(4); err != nil {
		return err
	} else if vp != 0 {
		if _, _, err := b.vector(vp, 8, maxFields); err != nil {
			return err
		}
	}
	return nil
}

// checkSchemaTable validates a Schema.fbs Schema table at st.
func checkSchemaTable(foot fb, st int) error {
	schema, err := foot.table(st)
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	// Schema: 0 endianness (0 = little), 1 fields, 2 custom_metadata, 3 features.
	// The reader would byte-swap a big-endian file in place, which a
	// read-only memory map does not allow.
	if p, err := schema(0); err != nil {
		return fmt.Errorf("schema: %w", err)
	} else if p != 0 {
		if e, err := foot.u16(p); err != nil || e != 0 {
			return fmt.Errorf("big-endian Arrow files are not supported; write it on a little-endian machine")
		}
	}
	count := 0
	if p, err := schema(1); err != nil {
		return fmt.Errorf("schema: %w", err)
	} else if p != 0 {
		if err := foot.tables(p, maxFields, func(t int) error { return foot.field(t, 0, &count) }); err != nil {
			return fmt.Errorf("schema fields: %w", err)
		}
	}
	if p, err := schema(2); err != nil {
		return fmt.Errorf("schema: %w", err)
	} else if err := foot.keyValues(p); err != nil {
		return fmt.Errorf("schema metadata: %w", err)
	}
	if p, err := schema(3); err != nil {
		return fmt.Errorf("schema: %w", err)
	} else if p != 0 {
		if _, _, err := foot.vector(p, 8, 64); err != nil {
			return fmt.Errorf("schema features: %w", err)
		}
	}
	return nil
}

// checkIPCStream validates every message header of an Arrow IPC stream of
// the given size (the format of Hugging Face datasets files) before the
// Arrow reader sees it.
func checkIPCStream(read func(off, n int64) ([]byte, error), size int64) error {
	return checkIPCStreamPrefix(read, size, -1)
}

// checkIPCStreamPrefix checks the schema and the first maxBatches record
// batches of a stream (all of them when maxBatches < 0) and ignores what
// follows: the torn tail of an interrupted write.
func checkIPCStreamPrefix(read func(off, n int64) ([]byte, error), size int64, maxBatches int) error {
	pos := int64(0)
	batches := 0
	for msgs := 0; ; msgs++ {
		if maxBatches >= 0 && batches >= maxBatches && msgs > 0 {
			return nil
		}
		if pos >= size {
			if maxBatches > batches {
				return fmt.Errorf("stream ends after %d record batches", batches)
			}
			return nil
		}
		if size-pos < 4 {
			return fmt.Errorf("truncated message at byte %d", pos)
		}
		head, err := read(pos, 4)
		if err != nil {
			return err
		}
		prefix := int64(4)
		mlen := int64(int32(binary.LittleEndian.Uint32(head)))
		if uint32(mlen) == 0xFFFFFFFF {
			if size-pos < 8 {
				return fmt.Errorf("truncated message at byte %d", pos)
			}
			if head, err = read(pos+4, 4); err != nil {
				return err
			}
			prefix, mlen = 8, int64(int32(binary.LittleEndian.Uint32(head)))
		}
		if mlen == 0 {
			if maxBatches > batches {
				return fmt.Errorf("stream ends after %d record batches", batches)
			}
			return nil // end-of-stream marker
		}
		if mlen < 0 || mlen > maxMetaBytes || pos+prefix+mlen > size {
			return fmt.Errorf("message at byte %d claims %d bytes of metadata; the file has %d left", pos, mlen, size-pos-prefix)
		}
		mb, err := read(pos+prefix, mlen)
		if err != nil {
			return err
		}
		b := fb(mb)
		root, err := b.deref(0)
		if err != nil {
			return fmt.Errorf("message at byte %d: %w", pos, err)
		}
		msg, err := b.table(root)
		if err != nil {
			return fmt.Errorf("message at byte %d: %w", pos, err)
		}
		var body int64
		if bl, err := msg(3); err != nil {
			return err
		} else if bl != 0 {
			if bl+8 > len(b) {
				return fmt.Errorf("message at byte %d: body length out of bounds", pos)
			}
			body = int64(binary.LittleEndian.Uint64(b[bl:]))
		}
		if body < 0 || pos+prefix+mlen+body > size || pos+prefix+mlen+body < pos {
			return fmt.Errorf("message at byte %d: a body of %d bytes does not fit the file", pos, body)
		}
		ht, err := msg(1)
		if err != nil || ht == 0 || ht >= len(b) {
			return fmt.Errorf("message at byte %d has no header type", pos)
		}
		hp, err := msg(2)
		if err != nil || hp == 0 {
			return fmt.Errorf("message at byte %d has no header", pos)
		}
		switch b[ht] {
		case 1: // Schema
			if msgs != 0 {
				return fmt.Errorf("a second schema at byte %d", pos)
			}
			st, err := b.deref(hp)
			if err != nil {
				return err
			}
			if err := checkSchemaTable(b, st); err != nil {
				return err
			}
		case 2, 3: // DictionaryBatch, RecordBatch
			if msgs == 0 {
				return fmt.Errorf("stream does not start with a schema")
			}
			m := make([]byte, 0, 8+len(mb))
			m = binary.LittleEndian.AppendUint32(m, 0xFFFFFFFF)
			m = binary.LittleEndian.AppendUint32(m, uint32(len(mb)))
			if err := checkMessage(append(m, mb...), body, b[ht] == 2); err != nil {
				return fmt.Errorf("message at byte %d: %w", pos, err)
			}
			if b[ht] == 3 {
				batches++
			}
		default:
			return fmt.Errorf("message at byte %d is of type %d; expected a schema, a dictionary batch or a record batch", pos, b[ht])
		}
		pos += prefix + mlen + body
	}
}

// bodyLimit lets the Arrow reader take record batches as large as the
// file (the library's default refuses bodies over 256 MiB, which a table
// written at once by pyarrow or polars easily has); checkIPC and
// checkIPCStream have already bounded every block by the bytes present.
func bodyLimit(size int64) ipc.Option {
	return ipc.WithBodySizeLimit(max(size, 1))
}
