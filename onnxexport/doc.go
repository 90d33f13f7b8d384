// Package onnxexport writes a dpfeat classifier as an ONNX model, so that
// a private model can be deployed where dpfeat is not: alone (Head:
// features in) or fused behind the encoder it was fitted on (Fused:
// images in).
//
// The graph is the classifier file's recipe, step for step (package
// preprocessing's order, then the head):
//
//	features ─▶ [transform: unit, − mean, ∘ scale, · projectionᵀ]
//	         ─▶ [unit norm] ─▶ [pool: · averaging matrix] ─▶ [· scale]
//	         ─▶ [− center] ─▶ [· min(1, C(1−10⁻⁶)/‖x‖)]
//	         ─▶ linear: Gemm(x, W, b)                        ─▶ scores
//	            prototypes: −mean_k ‖x − p_k‖, or −mean_k (1 − cos(x, p_k))
//	         ─▶ ArgMax ─▶ class
//
// It runs in float64 (a Cast after the float32 input), as dpfeat predict
// computes, so that exported and dpfeat scores agree to float32 rounding
// whatever their size; FuseOptions.Float32 and Head's single argument keep
// it in float32 for runtimes without float64 kernels. Euclidean
// distances are taken from the differences, not from ‖x‖² − 2x·p + ‖p‖²,
// which cancels near a prototype. The reductions are written for the
// target opset (their axes became an input in opset 18).
//
// Fused keeps the encoder's ModelProto as it is — its graph, opset,
// IR version and metadata are copied field by field at the protobuf wire
// level, not re-encoded — and appends the manifest's pooling (cls, mean,
// mean_patch, gap) and the head. In front of the encoder's nodes it puts,
// by FuseOptions.Input: for TakesImages (the default) the manifest's
// resize and centre crop of images of any size (resize.go: a resampling
// matrix per axis computed in the graph with encode's formulas, in
// opset-13 operators, since an antialiased Resize needs opset 18 and the
// encoder's opset is kept) and its pixel normalisation; for TakesPixels
// the normalisation alone ((v·scale − mean)/std per channel, cast to
// float16 for a float16 encoder); for TakesEncoderInput nothing. The
// classifier's encoder hash is checked against the encoder's bytes.
//
// Both models carry the classifier file's metadata under dpfeat.* keys in
// metadata_props: class names, encoder sha256 and name, method,
// hyperparameters and the full privacy statement. Nothing private beyond
// the classifier itself (already released under its guarantee) goes in.
//
// The protobuf messages are written with google.golang.org/protobuf's
// protowire; field numbers are those of onnx/onnx.proto3.
package onnxexport
