// Package encode runs a frozen encoder exported to ONNX through ONNX Runtime
// (CPU by default, the CUDA execution provider on request): library loading,
// preprocessing (decode, resize, crop, normalise, channel layout) and the
// batched, bounded-memory extraction pipeline that writes feature files.
package encode
