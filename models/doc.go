// Package models holds dpfeat's model files:
//
//   - encoder manifests (manifest.go, presets.go): how to feed an encoder
//     exported to ONNX (input size, layout, normalisation, output and
//     pooling) and the SHA-256 that pins the .onnx file;
//   - classifier files (classifier.go, safetensors.go): a linear head or
//     prototypes with the feature preprocessing they expect (normalise,
//     pool, scale, subtract the centre, clip — in that order), class names,
//     the encoder's hash, the full privacy statement, and evaluation and
//     prediction over feature files (evaluate.go).
//
// It does not fit anything: package train turns a solver's result into a
// Classifier, so models imports no solver. The Python scripts beside it
// export encoders (export_encoder.py) and the per-example-gradient
// training graphs of `dpfeat finetune` (export_training_graph.py; the
// contract is in package finetune); export_coupled_test_graph.py makes the
// batch-coupled graph a test refuses. There is no ONNX export of a fitted
// head yet (issue 20).
package models
