package finetune

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
)

// Bake turns a forward graph whose parameters are inputs (what
// models/export_training_graph.py writes with --forward) into a standalone
// model: each named parameter becomes an initializer holding its trained
// values and leaves the graph's inputs, and metadata goes into the model's
// metadata_props (replacing entries of the same key). It edits the ONNX
// protobuf directly, field by field, copying everything else unchanged.
func Bake(model []byte, params map[string]Tensor, metadata map[string]string) ([]byte, error) {
	fields, err := parseFields(model)
	if err != nil {
		return nil, fmt.Errorf("not an ONNX model: %w", err)
	}
	const (
		modelGraph    = 7
		modelMetadata = 14
		graphInit     = 5
		graphInput    = 11
	)
	var out []byte
	found := false
	for _, f := range fields {
		switch {
		case f.num == modelGraph && f.wire == wireBytes:
			g, err := bakeGraph(f.data, params, graphInit, graphInput)
			if err != nil {
				return nil, err
			}
			out = appendBytes(out, modelGraph, g)
			found = true
		case f.num == modelMetadata && f.wire == wireBytes:
			kv, err := parseFields(f.data)
			if err != nil {
				return nil, fmt.Errorf("metadata_props: %w", err)
			}
			key := ""
			for _, e := range kv {
				if e.num == 1 && e.wire == wireBytes {
					key = string(e.data)
				}
			}
			if _, replaced := metadata[key]; !replaced {
				out = append(out, f.raw...)
			}
		default:
			out = append(out, f.raw...)
		}
	}
	if !found {
		return nil, errors.New("no graph in the model")
	}
	keys := make([]string, 0, len(metadata))
	for k := range metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var e []byte
		e = appendBytes(e, 1, []byte(k))
		e = appendBytes(e, 2, []byte(metadata[k]))
		out = appendBytes(out, modelMetadata, e)
	}
	return out, nil
}

// Tensor is a float32 tensor to bake.
type Tensor struct {
	Shape []int64
	Data  []float32
}

func bakeGraph(graph []byte, params map[string]Tensor, initField, inputField int) ([]byte, error) {
	fields, err := parseFields(graph)
	if err != nil {
		return nil, fmt.Errorf("graph: %w", err)
	}
	var out []byte
	seen := map[string]bool{}
	for _, f := range fields {
		if f.num == inputField && f.wire == wireBytes {
			vi, err := parseFields(f.data)
			if err != nil {
				return nil, fmt.Errorf("graph input: %w", err)
			}
			name := ""
			for _, e := range vi {
				if e.num == 1 && e.wire == wireBytes {
					name = string(e.data)
				}
			}
			if _, ok := params[name]; ok {
				seen[name] = true
				continue // it becomes an initializer
			}
		}
		out = append(out, f.raw...)
	}
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !seen[n] {
			return nil, fmt.Errorf("the forward graph has no input %q to bake", n)
		}
		t := params[n]
		size := int64(1)
		for _, d := range t.Shape {
			size *= d
		}
		if size != int64(len(t.Data)) {
			return nil, fmt.Errorf("parameter %q: shape %v holds %d values, not %d", n, t.Shape, size, len(t.Data))
		}
		var tp []byte
		for _, d := range t.Shape {
			tp = appendVarint(tp, 1, uint64(d)) // dims
		}
		tp = appendVarint(tp, 2, 1) // data_type FLOAT
		tp = appendBytes(tp, 8, []byte(n))
		raw := make([]byte, 4*len(t.Data))
		for i, v := range t.Data {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		tp = appendBytes(tp, 9, raw) // raw_data
		out = appendBytes(out, initField, tp)
	}
	return out, nil
}

const (
	wireVarint = 0
	wire64     = 1
	wireBytes  = 2
	wire32     = 5
)

type field struct {
	num  int
	wire int
	data []byte // the payload of a length-delimited field
	raw  []byte // the whole field as encoded
}

// parseFields splits a protobuf message into its top-level fields.
func parseFields(b []byte) ([]field, error) {
	var out []field
	for i := 0; i < len(b); {
		start := i
		key, n := binary.Uvarint(b[i:])
		if n <= 0 {
			return nil, fmt.Errorf("bad field key at byte %d", i)
		}
		i += n
		f := field{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case wireVarint:
			_, n := binary.Uvarint(b[i:])
			if n <= 0 {
				return nil, fmt.Errorf("bad varint at byte %d", i)
			}
			i += n
		case wire64:
			i += 8
		case wire32:
			i += 4
		case wireBytes:
			l, n := binary.Uvarint(b[i:])
			if n <= 0 || l > uint64(len(b)-i-n) {
				return nil, fmt.Errorf("bad length at byte %d", i)
			}
			i += n
			f.data = b[i : i+int(l)]
			i += int(l)
		default:
			return nil, fmt.Errorf("unsupported wire type %d at byte %d", f.wire, start)
		}
		if i > len(b) {
			return nil, fmt.Errorf("truncated field at byte %d", start)
		}
		f.raw = b[start:i]
		out = append(out, f)
	}
	return out, nil
}

func appendVarint(b []byte, num int, v uint64) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3|wireVarint)
	return binary.AppendUvarint(b, v)
}

func appendBytes(b []byte, num int, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3|wireBytes)
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}
