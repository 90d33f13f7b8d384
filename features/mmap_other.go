//go:build !unix

package features

import "os"

// mapFile is not available here; Open falls back to reading through the
// file descriptor.
func mapFile(*os.File, int64) ([]byte, func() error, error) { return nil, nil, errNoMap }
