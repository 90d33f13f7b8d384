package features

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	pathpkg "path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/dpfeat/dpfeat/internal/objstore"
)

// A shard manifest lists feature files (shards) that are one dataset, in
// order: what a distributed extraction writes (extract --runner), and what
// every command reads as one file (Open), its rows the shards' rows one
// after another. Every shard must be a dpfeat feature file of the same
// dimension, encoder, classes, ids, views and data identity, holding the
// rows the manifest says; paths are relative to the manifest's folder and
// stay inside it (no "..", no absolute path, "/" between elements), at
// most MaxShards of them, no two naming one file. A manifest on object
// storage (gs://, s3://, memfs://: package objstore) resolves its paths
// the same way, after its own name's last "/" (ShardPath).

// ShardsFormat is a shard manifest's format field.
const ShardsFormat = "dpfeat.shards.v1"

// ShardManifest is the JSON of a shard manifest.
type ShardManifest struct {
	Format        string  `json:"format"`
	Rows          int64   `json:"rows"`
	Dim           int     `json:"dim"`
	EncoderSHA256 string  `json:"encoder_sha256,omitempty"`
	Shards        []Shard `json:"shards"`
	// Runner names what wrote the shards (prism, flink, …), for reports.
	Runner string `json:"runner,omitempty"`
}

// Shard is one file of a manifest.
type Shard struct {
	Path string `json:"path"`
	Rows int64  `json:"rows"`
}

// isShardManifest reports whether a file's first bytes are a shard
// manifest's (a JSON object naming ShardsFormat).
func isShardManifest(head []byte) bool {
	h := bytes.TrimLeft(head, " \t\r\n")
	return len(h) > 0 && h[0] == '{' && bytes.Contains(head, []byte(`"`+ShardsFormat+`"`))
}

// MaxShards bounds the shards of a manifest: every shard is opened (and
// mapped) when the manifest is, at some 30 KB each, so an 8 MB manifest
// of a quarter of a million shards once spun for ten minutes under a 1 GB
// address-space limit. A dataset of more rows takes larger shards
// (extract --shard-rows).
const MaxShards = 1 << 14

// maxManifestBytes bounds a manifest's JSON (MaxShards entries need well
// under a megabyte).
const maxManifestBytes = 16 << 20

// ReadShardManifest reads and checks a manifest's JSON, at a local path
// or a remote one (package objstore).
func ReadShardManifest(path string) (*ShardManifest, error) {
	b, err := objstore.ReadFile(context.Background(), path, maxManifestBytes)
	if errors.Is(err, objstore.ErrTooLarge) {
		return nil, fmt.Errorf("read %s: a shard manifest of more than %d bytes; expected at most that (%d shards)", path, maxManifestBytes, MaxShards)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return parseShardManifest(path, b)
}

// parseShardManifest checks a manifest's JSON, read from path.
func parseShardManifest(path string, b []byte) (*ShardManifest, error) {
	var m ShardManifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil || m.Format != ShardsFormat {
		return nil, fmt.Errorf("read %s: not a shard manifest (%s): %v", path, ShardsFormat, err)
	}
	if len(m.Shards) == 0 || m.Dim < 1 {
		return nil, fmt.Errorf("read %s: a shard manifest lists at least one shard and a dimension", path)
	}
	if len(m.Shards) > MaxShards {
		return nil, fmt.Errorf("read %s: %d shards; a manifest lists at most %d (extract them with a larger --shard-rows)", path, len(m.Shards), MaxShards)
	}
	var total int64
	seen := map[string]int{}
	for i, s := range m.Shards {
		if s.Path == "" || filepath.IsAbs(s.Path) || objstore.IsRemote(s.Path) || s.Rows < 1 {
			return nil, fmt.Errorf("read %s: shard %d: expected a relative path and at least one row, got %q with %d", path, i, s.Path, s.Rows)
		}
		if !filepath.IsLocal(filepath.FromSlash(s.Path)) || strings.Contains(s.Path, `\`) {
			return nil, fmt.Errorf("read %s: shard %d: %q leaves the manifest's folder; shard paths stay inside it", path, i, s.Path)
		}
		if j, dup := seen[pathpkg.Clean(s.Path)]; dup {
			return nil, fmt.Errorf("read %s: shards %d and %d are one file (%s); each example is in one shard", path, j+1, i+1, s.Path)
		}
		seen[pathpkg.Clean(s.Path)] = i
		if total += s.Rows; total < 0 {
			return nil, fmt.Errorf("read %s: the shards' rows overflow", path)
		}
	}
	if total != m.Rows {
		return nil, fmt.Errorf("read %s: the shards hold %d rows, the manifest says %d", path, total, m.Rows)
	}
	return &m, nil
}

// ShardPath resolves a shard's path as its manifest at manifest writes it
// (relative, with "/"): in the manifest's folder, local or remote (a
// manifest at gs://b/x/train.json names gs://b/x/train-shards/00000.arrow
// as "train-shards/00000.arrow").
func ShardPath(manifest, shard string) string {
	return objstore.Join(objstore.Dir(manifest), shard)
}

// WriteShardManifest writes m at path (temporary file and rename).
// A manifest at a remote path is one object, committed whole when
// written: the dataset's commit point on object storage, where shards
// cannot be published by renaming a folder.
func WriteShardManifest(path string, m *ShardManifest) error {
	m.Format = ShardsFormat
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return objstore.WriteFile(context.Background(), path, append(b, '\n'))
}

// openShards opens a manifest's shards as one File.
func openShards(path string, opt ReadOptions) (_ *File, err error) {
	m, err := ReadShardManifest(path)
	if err != nil {
		return nil, err
	}
	return openManifest(path, m, opt)
}

// openManifest opens the shards of the manifest m, read from path.
func openManifest(path string, m *ShardManifest, opt ReadOptions) (_ *File, err error) {
	f := &File{path: path, opt: opt, shardBatch: []int{0}, starts: []int64{0}}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	remote := objstore.IsRemote(path)
	var seen []os.FileInfo
	for i, s := range m.Shards {
		sp := ShardPath(path, s.Path)
		var sf *File
		var serr error
		if remote {
			// (Two entries naming one object are refused with the
			// manifest: an object has one name.)
			sf, serr = openRemote(sp, opt)
			if errors.Is(serr, os.ErrNotExist) {
				return nil, fmt.Errorf("read %s: shard %d of %d (%s) is missing: %v", path, i+1, len(m.Shards), s.Path, serr)
			}
		} else {
			st, serr := os.Stat(sp)
			if serr != nil {
				return nil, fmt.Errorf("read %s: shard %d of %d (%s) is missing: %v", path, i+1, len(m.Shards), s.Path, serr)
			}
			for j, o := range seen {
				if os.SameFile(o, st) {
					return nil, fmt.Errorf("read %s: shards %d and %d (%s, %s) are one file; each example is in one shard", path, j+1, i+1, m.Shards[j].Path, s.Path)
				}
			}
			seen = append(seen, st)
			sf, serr = openNative(sp, nil, opt)
		}
		if serr != nil {
			return nil, fmt.Errorf("read %s: shard %d of %d: %w", path, i+1, len(m.Shards), serr)
		}
		f.shards = append(f.shards, sf)
		sm := sf.meta
		switch {
		case sf.dim != m.Dim:
			err = fmt.Errorf("has %d features per row; the manifest says %d", sf.dim, m.Dim)
		case m.EncoderSHA256 != "" && sm.EncoderSHA256 != m.EncoderSHA256:
			err = fmt.Errorf("comes from encoder %.12s…; the manifest says %.12s…", sm.EncoderSHA256, m.EncoderSHA256)
		case sf.rows != s.Rows:
			err = fmt.Errorf("holds %d rows; the manifest says %d (replaced or damaged)", sf.rows, s.Rows)
		case i > 0 && !sameDataset(f.shards[0], sf):
			err = fmt.Errorf("differs from shard 1 in its classes, ids, views or data identity")
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: shard %d of %d (%s) %w", path, i+1, len(m.Shards), s.Path, err)
		}
		for b := 1; b < len(sf.starts); b++ {
			f.starts = append(f.starts, f.rows+sf.starts[b])
		}
		f.rows += sf.rows
		f.shardBatch = append(f.shardBatch, len(f.starts)-1)
	}
	first := f.shards[0]
	f.dim, f.withID, f.views, f.mixes, f.meta = first.dim, first.withID, first.views, first.mixes, first.meta
	f.checked = nil
	if err := oneShardPerExample(path, f); err != nil {
		return nil, err
	}
	return f, nil
}

// oneShardPerExample refuses a manifest whose shards share an example —
// copies of one shard, or shards of two layouts over one source — by the
// examples' ids (a multi-view file's example column): such a dataset
// would hold one example twice and count it as two, which the guarantee
// does not cover. Ids are compared by a 64-bit hash, each one read once.
func oneShardPerExample(path string, f *File) error {
	if !f.withID && !f.views {
		return nil // (a shard without ids: other tools' files cannot be checked)
	}
	owner := map[uint64]int32{}
	for k, sf := range f.shards {
		err := sf.Each(func(b Batch) error {
			ids := b.IDs
			if b.Examples != nil {
				ids = b.Examples
			}
			for _, id := range ids {
				h := maphash.String(idSeed, id)
				if s, ok := owner[h]; ok && int(s) != k {
					return fmt.Errorf("read %s: shards %d and %d hold the same example; each example is in one shard (extract the source again)", path, s+1, k+1)
				}
				owner[h] = int32(k)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// idSeed keys the hash of oneShardPerExample (for one process).
var idSeed = maphash.MakeSeed()

// sameDataset reports whether two shards describe the same dataset: the
// classes, ids, views and the data identity agree (the creation times and
// sources of the parts may not).
func sameDataset(a, b *File) bool {
	return a.withID == b.withID && slices.Equal(a.meta.Classes, b.meta.Classes) && a.meta.DataID == b.meta.DataID &&
		reflect.DeepEqual(a.meta.Views, b.meta.Views) && a.meta.EncoderSHA256 == b.meta.EncoderSHA256
}

// shardBatchAt reads batch i of a sharded File: its shard's batch, with
// the offset of the whole.
func (f *File) shardBatchAt(i int) (Batch, error) {
	if i < 0 || i >= f.NumBatches() {
		return Batch{}, fmt.Errorf("read %s: record batch %d out of range (%d batches)", f.path, i, f.NumBatches())
	}
	s := sort.SearchInts(f.shardBatch, i+1) - 1
	b, err := f.shards[s].Batch(i - f.shardBatch[s])
	if err != nil {
		return Batch{}, err
	}
	b.Offset = f.starts[i]
	return b, nil
}

// Shards returns the files of a sharded File, in order (nil for one file).
func (f *File) Shards() []*File { return f.shards }
