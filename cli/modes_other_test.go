//go:build !unix

package cli

import (
	"os"
	"testing"
)

// strictUmask: no umask outside Unix.
func strictUmask(t *testing.T) {}

// checkMode: Unix modes only.
func checkMode(t *testing.T, step, path string, want os.FileMode) {}
