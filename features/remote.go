package features

import (
	"context"
	"errors"
	"fmt"
	"os"
	pathpkg "path"
	"strings"
	"sync"

	"github.com/dpfeat/dpfeat/internal/objstore"
)

// Files on object storage (gs://, s3://, memfs://; package objstore) are
// told apart by their names: a name ending in .json is a shard manifest,
// read afresh each time it is opened (a manifest is rewritten in place:
// it is a dataset's commit point); any other is a dpfeat feature file —
// one file, or a manifest's shard — fetched once per process into an
// unlinked local file and opened from there like any other
// (memory-mapped). A runner's worker reads the same shard once per pass;
// the copies it keeps are bounded (keptFetches, keptFetchBytes) and keyed
// by the object's name, size and time (objstore.Stamp), so a replaced
// object is fetched again. Other formats are converted locally: a remote
// Parquet or CSV file is refused, with the one line that says so.

const (
	keptFetches    = 256
	keptFetchBytes = 4 << 30
)

var fetched struct {
	sync.Mutex
	m     map[string]fetchedCopy
	order []string
	bytes int64
}

// fetchedCopy is a kept copy: its open descriptor and its size.
type fetchedCopy struct {
	f    *os.File
	size int64
}

// fetch returns a new descriptor of a local, unlinked copy of the object
// at path.
func fetch(path string) (*os.File, error) {
	ctx := context.Background()
	stamp, err := objstore.Stamp(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("read %w", err) // (objstore's errors name the object)
	}
	key := path + "\x00" + stamp
	fetched.Lock()
	defer fetched.Unlock()
	if c, ok := fetched.m[key]; ok {
		return dupFile(c.f)
	}
	f, err := objstore.Fetch(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("read %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := st.Size()
	if fetched.m == nil {
		fetched.m = map[string]fetchedCopy{}
	}
	for len(fetched.order) > 0 && (len(fetched.order) >= keptFetches || fetched.bytes+size > keptFetchBytes) {
		old := fetched.m[fetched.order[0]]
		old.f.Close() // (open Files hold descriptors of their own)
		fetched.bytes -= old.size
		delete(fetched.m, fetched.order[0])
		fetched.order = fetched.order[1:]
	}
	fetched.m[key] = fetchedCopy{f, size}
	fetched.order = append(fetched.order, key)
	fetched.bytes += size
	return dupFile(f)
}

// openRemote opens the object at path: a shard manifest (a name ending
// in .json) or a dpfeat feature file.
func openRemote(path string, opt ReadOptions) (*File, error) {
	if err := objstore.CheckName(path); err != nil {
		return nil, fmt.Errorf("read %v", err)
	}
	if strings.EqualFold(pathpkg.Ext(path), ".json") {
		b, err := objstore.ReadFile(context.Background(), path, maxManifestBytes)
		if errors.Is(err, objstore.ErrTooLarge) {
			return nil, fmt.Errorf("read %s: a shard manifest of more than %d bytes; expected at most that (%d shards)", path, maxManifestBytes, MaxShards)
		}
		if err != nil {
			return nil, fmt.Errorf("read %w", err)
		}
		if !isShardManifest(b) {
			return nil, fmt.Errorf("read %s: not a shard manifest (%s); on object storage a name ending in .json is one", path, ShardsFormat)
		}
		m, err := parseShardManifest(path, b)
		if err != nil {
			return nil, err
		}
		return openManifest(path, m, opt)
	}
	f, err := fetch(path)
	if err != nil {
		return nil, err
	}
	// (Descriptors of one copy share its offset: read at offsets.)
	head := make([]byte, len(arrowMagic))
	if n, _ := f.ReadAt(head, 0); n < len(head) || string(head) != string(arrowMagic) {
		f.Close()
		return nil, fmt.Errorf("read %s: on object storage dpfeat reads its own feature files and shard manifests (names ending in .json); this is neither: convert it locally first (dpfeat convert)", path)
	}
	ff, err := openNative(path, f, opt)
	if errors.Is(err, errForeign) {
		return nil, fmt.Errorf("read %s: an Arrow file that is not a dpfeat feature file (%v); on object storage dpfeat reads its own feature files and shard manifests: convert it locally first (dpfeat convert)", path, err)
	}
	return ff, err
}
