//go:build !nobeam

package objstore

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	// The file systems of BeamSchemes: Google Cloud Storage, Amazon S3,
	// and Beam's in-memory one (one process's: tests, in-process runs).
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"
)

// newFS is Beam's registry.
func newFS(ctx context.Context, p string) (fileSystem, error) {
	return filesystem.New(ctx, p)
}
