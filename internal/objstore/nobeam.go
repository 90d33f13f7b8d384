//go:build nobeam

package objstore

import (
	"context"
	"errors"
)

// newFS: the nobeam build has no file systems (main hands commands that
// name remote paths to dpfeat-beam).
func newFS(context.Context, string) (fileSystem, error) {
	return nil, errors.New("no file system registered")
}
