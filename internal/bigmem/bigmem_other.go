//go:build !linux

package bigmem

func bytesOf([]float64) []byte { return nil }

func adviseHuge([]byte) {}

func bytesOf32([]float32) []byte { return nil }
