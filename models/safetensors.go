package models

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// Tensor is a named float32 tensor of a safetensors file.
type Tensor struct {
	Name  string
	Shape []int64
	Data  []float32
}

type tensorInfo struct {
	DType       string  `json:"dtype"`
	Shape       []int64 `json:"shape"`
	DataOffsets [2]int  `json:"data_offsets"`
}

// EncodeSafetensors lays out F32 tensors (in name order) and string
// metadata as a safetensors file: an 8-byte little-endian header length,
// the JSON header (padded to 8 bytes, as the reference writer does), then
// the data.
func EncodeSafetensors(tensors []Tensor, metadata map[string]string) ([]byte, error) {
	ts := append([]Tensor(nil), tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	header := map[string]any{}
	var body bytes.Buffer
	for _, t := range ts {
		n := int64(1)
		for _, d := range t.Shape {
			n *= d
		}
		if n != int64(len(t.Data)) {
			return nil, fmt.Errorf("tensor %s: shape %v holds %d values, not %d", t.Name, t.Shape, n, len(t.Data))
		}
		start := body.Len()
		binary.Write(&body, binary.LittleEndian, t.Data)
		header[t.Name] = tensorInfo{DType: "F32", Shape: t.Shape, DataOffsets: [2]int{start, body.Len()}}
	}
	if metadata != nil {
		header["__metadata__"] = metadata
	}
	hb, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	for len(hb)%8 != 0 {
		hb = append(hb, ' ')
	}
	var out bytes.Buffer
	binary.Write(&out, binary.LittleEndian, uint64(len(hb)))
	out.Write(hb)
	out.Write(body.Bytes())
	return out.Bytes(), nil
}

// DecodeSafetensors reads the F32 tensors and metadata of a safetensors
// file, checking every offset and shape against the file.
func DecodeSafetensors(b []byte) (map[string]Tensor, map[string]string, error) {
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("too short for a safetensors file")
	}
	hl := binary.LittleEndian.Uint64(b)
	if hl > uint64(len(b)-8) || hl > 100<<20 {
		return nil, nil, fmt.Errorf("not a safetensors file (header length %d in a %d-byte file)", hl, len(b))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+hl], &raw); err != nil {
		return nil, nil, fmt.Errorf("not a safetensors file: %v", err)
	}
	body := b[8+hl:]
	var md map[string]string
	if m, ok := raw["__metadata__"]; ok {
		if err := json.Unmarshal(m, &md); err != nil {
			return nil, nil, fmt.Errorf("safetensors metadata: %v", err)
		}
	}
	out := map[string]Tensor{}
	for name, r := range raw {
		if name == "__metadata__" {
			continue
		}
		var ti tensorInfo
		if err := json.Unmarshal(r, &ti); err != nil {
			return nil, nil, fmt.Errorf("tensor %s: %v", name, err)
		}
		if ti.DType != "F32" {
			return nil, nil, fmt.Errorf("tensor %s has dtype %s; expected F32", name, ti.DType)
		}
		s, e := ti.DataOffsets[0], ti.DataOffsets[1]
		if s < 0 || e < s || e > len(body) || (e-s)%4 != 0 {
			return nil, nil, fmt.Errorf("tensor %s: data offsets [%d, %d) outside the %d-byte body", name, s, e, len(body))
		}
		n := int64(1)
		for _, d := range ti.Shape {
			if d < 0 || d > math.MaxInt32 {
				return nil, nil, fmt.Errorf("tensor %s: bad shape %v", name, ti.Shape)
			}
			n *= d
		}
		if n != int64((e-s)/4) {
			return nil, nil, fmt.Errorf("tensor %s: shape %v does not match %d bytes", name, ti.Shape, e-s)
		}
		data := make([]float32, (e-s)/4)
		binary.Read(bytes.NewReader(body[s:e]), binary.LittleEndian, data)
		out[name] = Tensor{Name: name, Shape: ti.Shape, Data: data}
	}
	return out, md, nil
}
