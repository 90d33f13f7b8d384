//go:build !unix

package features

import "os"

// mapFile is not available here; Open falls back to reading through the
// file descriptor.
func mapFile(*os.File, int64) ([]byte, func() error, error) { return nil, nil, errNoMap }

// dupFile opens f's file again by name (here an open file cannot be
// unlinked, so the name stays).
func dupFile(f *os.File) (*os.File, error) { return os.Open(f.Name()) }
