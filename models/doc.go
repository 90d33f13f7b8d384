// Package models describes how to feed an encoder (manifests and presets for
// common ViT and ResNet exports) and stores classifiers: the classifier file
// (weights or prototypes, feature preprocessing, class names, the encoder's
// hash and the full privacy statement), ONNX export of heads, and the
// per-example-gradient training-graph contract used by `dpfeat finetune`.
package models
