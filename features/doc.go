// Package features owns dpfeat's feature files and the datasets they come
// from: the Arrow IPC feature file of ../shared/SPEC.md (a fixed_size_list
// of float32 features, an int32 label, an optional id, and schema metadata),
// its streaming writer and reader, the image dataset readers (image folders,
// Hugging Face Arrow, CIFAR, IDX), splits and class-imbalanced subsets, and
// the streaming sufficient statistics (Gram matrices, per-class sums and
// counts) that the solvers consume.
package features
