// Package spec says what a distributed run is — which runner, its
// options, an extraction job and the layout of its shards — without Apache
// Beam, so that the commands that describe, check or hand over such a run
// do not link Beam (package runner runs it). A dpfeat built with the
// nobeam tag (bin/dpfeat) hands every --runner command and every worker
// start to the Beam build beside it (bin/dpfeat-beam), and starts in a
// fraction of the time.
package spec

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

// Runners are the Beam runners dpfeat runs on.
var Runners = []string{"prism", "flink", "spark", "dataflow", "universal"}

// Options choose the runner.
type Options struct {
	// Runner is one of Runners ("": prism).
	Runner string
	// Flags are Beam pipeline options by name (endpoint, environment_type,
	// environment_config, project, region, temp_location, …), set before
	// the pipeline runs.
	Flags map[string]string
	// Workers bounds how many shards one worker process handles at once
	// (0: its cores): on Prism, this process, so 1 and 2 compare one
	// worker with two.
	Workers int
}

// Check validates the runner's name and workers (package runner also
// checks the flags against Beam's options).
func (o Options) Check() error {
	if o.Runner != "" && !slices.Contains(Runners, o.Runner) {
		return fmt.Errorf("runner %q; expected one of %s", o.Runner, strings.Join(Runners, ", "))
	}
	if o.Workers < 0 {
		return fmt.Errorf("workers %d; expected at least 1 (0: the cores)", o.Workers)
	}
	return nil
}

// Name is the runner's name ("prism" by default).
func (o Options) Name() string {
	if o.Runner == "" {
		return "prism"
	}
	return o.Runner
}

// IsWorker reports whether the process was started as a Beam worker —
// by a container boot (its --worker flag) or by a runner's PROCESS
// environment (IsBoot) — and main runs the worker instead of a command.
func IsWorker(args []string) bool {
	return IsBoot(args) || slices.ContainsFunc(args, func(a string) bool { return a == "--worker" || a == "--worker=true" || a == "-worker=true" })
}

// IsBoot reports whether a runner's PROCESS environment started the
// process as its boot loader: with --provision_endpoint and without
// --worker (runner.Boot).
func IsBoot(args []string) bool {
	return ParseBoot(args).Provision != "" && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(strings.TrimLeft(a, "-"), "worker") })
}

// BootArgs are the flags a runner starts a PROCESS environment's command
// with.
type BootArgs struct {
	ID, Provision, SemiPersist string
}

// ParseBoot reads the boot flags (--name=value or --name value): the
// id without the single quotes Prism wraps it in.
func ParseBoot(args []string) BootArgs {
	var b BootArgs
	for i := 0; i < len(args); i++ {
		name, val, ok := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !ok && i+1 < len(args) {
			val = args[i+1]
		}
		var dst *string
		switch name {
		case "id":
			dst = &b.ID
		case "provision_endpoint":
			dst = &b.Provision
		case "semi_persist_dir":
			dst = &b.SemiPersist
		default:
			continue
		}
		if !ok {
			i++
		}
		if len(val) >= 2 && val[0] == '\'' && val[len(val)-1] == '\'' {
			val = val[1 : len(val)-1]
		}
		*dst = val
	}
	return b
}

// ExtractJob is a distributed extraction: everything a worker needs to
// extract its shards (it travels to the workers as JSON).
type ExtractJob struct {
	// Model and Manifest are the encoder and its manifest; Threads and
	// Device each worker slot's ONNX Runtime session's.
	Model    string          `json:"model"`
	Manifest models.Manifest `json:"manifest"`
	Threads  int             `json:"threads"`
	Device   string          `json:"device"`
	// ExactFloat32 turns TF32 off on CUDA (extract --tf32=false).
	ExactFloat32 bool `json:"exact_float32,omitempty"`
	// Data, Dataset are the source and how to open it.
	Data    string                  `json:"data"`
	Dataset features.DatasetOptions `json:"dataset"`
	// Offset and Limit choose the examples (Limit 0: to the end); the
	// shards cut them into ranges of ShardRows examples.
	Offset, Limit, ShardRows int64
	// Extract are the extraction's options (batch, decode workers,
	// --skip-bad, views, the files' metadata and identity); Resume
	// continues interrupted shards and keeps finished ones.
	Extract encode.ExtractOptions `json:"extract"`
	// Out is the manifest to write; the shards go to ShardDir(Out).
	Out string `json:"out"`
	// Workers bounds the shards one worker process extracts at once.
	Workers int `json:"workers"`
	// Replace lets the run replace an earlier manifest and its shard
	// folder (--force), once its own shards are finished.
	Replace bool `json:"replace"`
}

// ExtractResult reports a distributed extraction.
type ExtractResult struct {
	Out    string `json:"out"`
	Shards int    `json:"shards"`
	Made   int    `json:"shards_made"`
	Rows   int64  `json:"rows"`
	Dim    int    `json:"dim"`
	Runner string `json:"runner"`
	// Note says what the run could not tidy (an earlier shard folder that
	// held files dpfeat did not write, kept under another name).
	Note string `json:"note,omitempty"`
}

// ShardDir is where a distributed extraction publishes the shards of
// manifest out.
func ShardDir(out string) string {
	return out[:len(out)-len(filepath.Ext(out))] + ".shards"
}

// WorkDir is where a distributed extraction writes the shards of manifest
// out until every one is finished: the folder an interrupted extraction
// leaves for --resume (the shard folder's OUT.partial).
func WorkDir(out string) string { return ShardDir(out) + ".partial" }

// SweepJob is a sweep run on a runner: what every worker needs to run its
// jobs (it travels to them as JSON).
type SweepJob struct {
	// Config is the sweep's configuration file (an absolute path every
	// worker reads, as it reads the datasets it names); MaxJobs the
	// limit it was loaded with.
	Config  string `json:"config"`
	MaxJobs int64  `json:"max_jobs"`
	// Version and Classifiers are sweep.RunOptions's.
	Version     string `json:"version"`
	Classifiers string `json:"classifiers,omitempty"`
	// Rows is the folder each worker writes a finished job's row to
	// (ID.json, through a temporary file) for the driver to pick up.
	Rows string `json:"rows"`
	// Workers bounds the jobs one worker process runs at once.
	Workers int `json:"workers"`
}
