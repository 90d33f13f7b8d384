package main

import (
	"slices"
	"strings"

	"github.com/dpfeat/dpfeat/internal/objstore"
)

// usesRunner reports whether a command line asks for a runner (--runner
// NAME or --runner=NAME, before a "--"), is the job server, or names a
// path on object storage (gs://, s3://: objstore.BeamSchemes, as a flag's
// value or --flag=value), whose file systems only the Beam build has.
func usesRunner(args []string) bool {
	if len(args) > 0 && args[0] == "job-server" {
		return true
	}
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--runner" || a == "-runner" || strings.HasPrefix(a, "--runner=") || strings.HasPrefix(a, "-runner=") {
			return true
		}
		if strings.HasPrefix(a, "-") {
			_, a, _ = strings.Cut(a, "=")
		}
		if slices.Contains(objstore.BeamSchemes, objstore.Scheme(a)) {
			return true
		}
	}
	return false
}
