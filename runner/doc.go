// Package runner runs dpfeat's embarrassingly parallel work — extraction,
// the sufficient statistics of the one-pass methods, and each pass of the
// iterative ones and of a transform (solvers.Pass: DP-FC's covariance and
// gradient steps, DP-SGD's steps, DP-Newton's Hessians and gradients) — as
// Apache Beam pipelines (the Beam Go SDK), past one machine: on Prism,
// Beam's portable runner, in-process (the local default: its workers are
// goroutines of this process, the loopback environment), or on Flink,
// Spark or Dataflow, which run the same pipeline.
//
// The pattern is Google's Privacy on Beam's: every contribution is bounded
// before the combiner (each shard's statistics are solvers.Accumulate's,
// which clips or normalises each row as the single-machine path does), the
// combiner only adds (solvers.Stats.Add: associative, commutative, in
// float64), and noise is added once, on the driver, by the same method code
// as on one machine (solvers.Options.Remote, which Fit implements) — so
// the guarantee, the ledger entry and, with --seed, the classifier are
// those of the single-machine run, up to the order of additions. A
// Poisson-sampled step's sample is drawn where the rows are read, from a
// key the driver draws and the index of each shard's first example
// (accounting.PoissonSample).
//
// Extraction shards the source by example ranges (each a multiple of the
// encoder batch, so that every batch the encoder sees is the one it sees
// on one machine), extracts each range into a feature file with one ONNX
// Runtime session per worker slot reused across bundles, and writes a
// shard manifest (features.ShardManifest) that every command reads as one
// file. Beam's builds are cgo-free, but ONNX Runtime and OpenBLAS need cgo:
// the worker is dpfeat's own binary (main calls Worker when a runner
// starts it as a Beam worker); a remote runner needs a container image
// holding it and the ONNX Runtime library (see the repository's
// Dockerfile and docs/distributed.md), and paths every worker can read and
// write (a shared file system).
package runner
