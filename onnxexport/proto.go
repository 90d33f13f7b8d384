package onnxexport

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The ONNX protobuf messages this package writes, by field number
// (onnx/onnx.proto3). Only what a classifier head needs is written; a
// fused encoder's own messages are copied as they are, field by field.
const (
	modelIRVersion     = 1
	modelProducerName  = 2
	modelProducerVer   = 3
	modelDocString     = 6
	modelGraph         = 7
	modelOpsetImport   = 8
	modelMetadataProps = 14

	opsetDomain  = 1
	opsetVersion = 2

	entryKey   = 1
	entryValue = 2

	graphNode        = 1
	graphName        = 2
	graphInitializer = 5
	graphInput       = 11
	graphOutput      = 12

	nodeInput     = 1
	nodeOutput    = 2
	nodeName      = 3
	nodeOpType    = 4
	nodeAttribute = 5

	attrName  = 1
	attrInt   = 3
	attrInts  = 8
	attrType  = 20
	attrTInt  = 2
	attrTInts = 7

	tensorDims         = 1
	tensorDataType     = 2
	tensorName         = 8
	tensorRawData      = 9
	tensorExternalData = 13
	tensorDataLocation = 14

	valueName = 1
	valueType = 2

	typeTensor      = 1
	tensorElemType  = 1
	tensorShape     = 2
	shapeDim        = 1
	dimValue        = 1
	dimParam        = 2
	elemFloat       = 1
	elemInt64       = 7
	elemDouble      = 11
	irVersion       = 8  // ONNX 1.10+, read by every ONNX Runtime since 1.10
	headOpset       = 17 // the head alone: what PyTorch exports by default
	minOpset        = 13 // a fused encoder's opset must be at least this
	external        = 1  // TensorProto.DataLocation EXTERNAL
	maxProtobufSize = 2 << 30
)

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, num protowire.Number, v int64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

// tensor is an initializer: float32, float64 or int64 values with their
// shape.
type tensor struct {
	name string
	dims []int64
	f32  []float32
	f64  []float64
	i64  []int64
}

func (t tensor) marshal() []byte {
	var b []byte
	for _, d := range t.dims {
		b = appendVarint(b, tensorDims, d)
	}
	var raw []byte
	switch {
	case t.i64 != nil:
		b = appendVarint(b, tensorDataType, elemInt64)
		for _, v := range t.i64 {
			raw = protowire.AppendFixed64(raw, uint64(v))
		}
	case t.f64 != nil:
		b = appendVarint(b, tensorDataType, elemDouble)
		raw = make([]byte, 0, 8*len(t.f64))
		for _, v := range t.f64 {
			raw = protowire.AppendFixed64(raw, math.Float64bits(v))
		}
	default:
		b = appendVarint(b, tensorDataType, elemFloat)
		raw = make([]byte, 0, 4*len(t.f32))
		for _, v := range t.f32 {
			raw = protowire.AppendFixed32(raw, math.Float32bits(v))
		}
	}
	b = appendString(b, tensorName, t.name)
	return appendBytes(b, tensorRawData, raw)
}

// attr is a node attribute: an int or a list of ints.
type attr struct {
	name string
	i    *int64
	ints []int64
}

func intAttr(name string, v int64) attr     { return attr{name: name, i: &v} }
func intsAttr(name string, v ...int64) attr { return attr{name: name, ints: v} }

func (a attr) marshal() []byte {
	b := appendString(nil, attrName, a.name)
	switch {
	case a.i != nil:
		b = appendVarint(b, attrInt, *a.i)
		b = appendVarint(b, attrType, attrTInt)
	default:
		for _, v := range a.ints {
			b = appendVarint(b, attrInts, v)
		}
		b = appendVarint(b, attrType, attrTInts)
	}
	return b
}

// node is one operator.
type node struct {
	op      string
	name    string
	inputs  []string
	outputs []string
	attrs   []attr
}

func (n node) marshal() []byte {
	var b []byte
	for _, s := range n.inputs {
		b = appendString(b, nodeInput, s)
	}
	for _, s := range n.outputs {
		b = appendString(b, nodeOutput, s)
	}
	b = appendString(b, nodeName, n.name)
	b = appendString(b, nodeOpType, n.op)
	for _, a := range n.attrs {
		b = appendBytes(b, nodeAttribute, a.marshal())
	}
	return b
}

// valueInfo declares a graph input or output: a tensor of elem type and
// shape (a dim ≤ 0 is symbolic, named by param).
type valueInfo struct {
	name  string
	elem  int64
	dims  []int64
	param string // name of the symbolic (batch) dimension
	// symbols names each symbolic dimension, when they differ; else param.
	symbols []string
}

func (v valueInfo) marshal() []byte {
	var shape []byte
	for i, d := range v.dims {
		var dim []byte
		switch {
		case d > 0:
			dim = appendVarint(nil, dimValue, d)
		case v.symbols != nil:
			dim = appendString(nil, dimParam, v.symbols[i])
		default:
			dim = appendString(nil, dimParam, v.param)
		}
		shape = appendBytes(shape, shapeDim, dim)
	}
	tt := appendVarint(nil, tensorElemType, v.elem)
	tt = appendBytes(tt, tensorShape, shape)
	typ := appendBytes(nil, typeTensor, tt)
	b := appendString(nil, valueName, v.name)
	return appendBytes(b, valueType, typ)
}

// field is one protobuf field as it was read: its number, wire type and
// the bytes of the whole field (tag included), so that it can be written
// back unchanged.
type field struct {
	num  protowire.Number
	typ  protowire.Type
	raw  []byte // tag and value
	body []byte // the value: a length-delimited field's contents, else nil
	v    uint64 // a varint's value
}

// fields splits a message into its fields.
func fields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		f := field{num: num, typ: typ}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		switch typ {
		case protowire.BytesType:
			f.body, _ = protowire.ConsumeBytes(b[n:])
		case protowire.VarintType:
			f.v, _ = protowire.ConsumeVarint(b[n:])
		}
		f.raw = b[:n+m]
		out = append(out, f)
		b = b[n+m:]
	}
	return out, nil
}

// stringField is the first length-delimited field num of a message, as a
// string ("" when absent or unreadable).
func stringField(msg []byte, num protowire.Number) string {
	fs, err := fields(msg)
	if err != nil {
		return ""
	}
	for _, f := range fs {
		if f.num == num && f.typ == protowire.BytesType {
			return string(f.body)
		}
	}
	return ""
}

// stringFields lists every length-delimited field num of a message.
func stringFields(msg []byte, num protowire.Number) []string {
	fs, _ := fields(msg)
	var out []string
	for _, f := range fs {
		if f.num == num && f.typ == protowire.BytesType {
			out = append(out, string(f.body))
		}
	}
	return out
}
