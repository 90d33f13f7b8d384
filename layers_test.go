package main

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayers keeps the package graph pointing down: the solvers see rows
// through their own interface (no features, no encode), classifier files
// know nothing of how they were fitted (models does not import solvers),
// and the mechanisms and their accountant import no upper floor.
func TestLayers(t *testing.T) {
	const mod = "github.com/dpfeat/dpfeat/"
	forbidden := map[string][]string{
		"solvers":       {"features", "encode", "models", "train", "sweep", "cli", "ledger", "audit"},
		"models":        {"solvers", "train", "sweep", "cli", "prototypes"},
		"accounting":    {"features", "encode", "models", "solvers", "train", "sweep", "cli", "ledger"},
		"preprocessing": {"features", "encode", "models", "solvers", "train", "sweep", "cli"},
		"features":      {"encode", "models", "solvers", "train", "sweep", "cli"},
		"prototypes":    {"features", "encode", "models", "train", "sweep", "cli"},
		"train":         {"cli", "sweep", "encode"},
		"sweep":         {"cli"},
		"ledger":        {"cli", "sweep", "train", "solvers"},
		"onnxexport":    {"encode", "features", "solvers", "train", "sweep", "cli"},
		"augment":       {"encode", "models", "solvers", "train", "sweep", "cli", "accounting"},
		"synthbasis":    {"solvers", "train", "sweep", "cli", "accounting", "ledger"}, // images and an encoder only: no data, no mechanism
	}
	for pkg, bad := range forbidden {
		p, err := build.ImportDir(filepath.FromSlash(pkg), 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			for _, b := range bad {
				if strings.TrimPrefix(imp, mod) == b {
					t.Errorf("%s imports %s", pkg, b)
				}
			}
		}
	}
}
