package features

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/internal/objstore"
)

// upload copies a local shard folder (shardFiles's) to the remote folder
// dir, the manifest last.
func upload(t *testing.T, local string, m *ShardManifest, dir string) string {
	t.Helper()
	ctx := context.Background()
	for _, s := range m.Shards {
		if err := objstore.Put(ctx, filepath.Join(local, s.Path), objstore.Join(dir, s.Path)); err != nil {
			t.Fatal(err)
		}
	}
	out := objstore.Join(dir, "all.json")
	if err := WriteShardManifest(out, m); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRemoteManifest (#42 item 2): a manifest and its shards on object
// storage (Beam's in-memory file system, as gs:// and s3:// go) open as
// the local ones do: the same rows, ids, batches and metadata; a
// replaced shard is read again, not from the copy kept.
func TestRemoteManifest(t *testing.T) {
	local := t.TempDir()
	meta := Metadata{Classes: []string{"a", "b"}, EncoderSHA256: strings.Repeat("ab", 32), DataID: "d1"}
	path, m := shardFiles(t, local, 3, 2, meta)
	remote := upload(t, local, m, "memfs://features-test/remote-manifest")
	want, err := ReadAll(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(remote, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Data, want.Data) || !slices.Equal(got.IDs, want.IDs) || !slices.Equal(got.Labels, want.Labels) {
		t.Fatal("the remote manifest reads other rows than the local one")
	}
	if md, err := ReadMetadata(remote); err != nil || md.DataID != "d1" || md.EncoderSHA256 != meta.EncoderSHA256 {
		t.Errorf("metadata %+v, %v", md, err)
	}
	f, err := Open(remote, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.NumBatches() != 6 || len(f.Shards()) != 3 || f.Shards()[1].Path() != "memfs://features-test/remote-manifest/parts/00001.arrow" {
		t.Errorf("%d batches, %d shards, shard 2 named %s", f.NumBatches(), len(f.Shards()), f.Shards()[1].Path())
	}
	f.Close()
	// One shard alone, as a runner's worker opens it.
	one, err := ReadAll(objstore.Join("memfs://features-test/remote-manifest", m.Shards[2].Path), ReadOptions{})
	if err != nil || !slices.Equal(one.IDs, want.IDs[14:]) {
		t.Fatalf("shard 3 alone: %v %v", one, err)
	}
	// A replaced shard (other values, same size) is fetched again.
	alt := filepath.Join(t.TempDir(), "alt.arrow")
	b := Batch{Dim: 2, Features: make([]float32, 14), Labels: make([]int32, 7), IDs: want.IDs[14:]}
	if err := WriteFile(alt, meta, WriterOptions{WithID: true}, b); err != nil {
		t.Fatal(err)
	}
	objstore.Put(context.Background(), alt, "memfs://features-test/remote-manifest/parts/00002.arrow")
	again, err := ReadAll(remote, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Row(20)[0] != 0 {
		t.Fatalf("after replacing shard 3: row 21 %v (want zeros), %v", again.Row(20), err)
	}
}

// TestRemoteRefusals: what a remote manifest refuses, naming the object.
func TestRemoteRefusals(t *testing.T) {
	ctx := context.Background()
	meta := Metadata{Classes: []string{"a", "b"}, EncoderSHA256: strings.Repeat("ab", 32)}
	local := t.TempDir()
	_, m := shardFiles(t, local, 2, 2, meta)
	dir := "memfs://features-test/refusals"
	remote := upload(t, local, m, dir)
	objstore.Remove(ctx, objstore.Join(dir, m.Shards[1].Path))
	if _, err := Open(remote, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "shard 2 of 2 (parts/00001.arrow) is missing") {
		t.Errorf("a missing shard: %v", err)
	}
	twice := objstore.Join(dir, "twice.json")
	objstore.WriteFile(ctx, twice, []byte(`{"format": "dpfeat.shards.v1", "rows": 14, "dim": 2, "shards": [{"path": "parts/00000.arrow", "rows": 7}, {"path": "parts/./00000.arrow", "rows": 7}]}`))
	if _, err := Open(twice, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "are one file") {
		t.Errorf("one shard listed twice: %v", err)
	}
	notManifest := objstore.Join(dir, "x.json")
	objstore.WriteFile(ctx, notManifest, []byte(`{"a": 1}`))
	if _, err := Open(notManifest, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "not a shard manifest") {
		t.Errorf("a remote .json that is not a manifest: %v", err)
	}
	csv := objstore.Join(dir, "x.csv")
	objstore.WriteFile(ctx, csv, []byte("a,b\n1,2\n"))
	if _, err := Open(csv, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "convert it locally first") {
		t.Errorf("a remote CSV file: %v", err)
	}
	if _, err := Open(objstore.Join(dir, "none.arrow"), ReadOptions{}); err == nil || !strings.Contains(err.Error(), os.ErrNotExist.Error()) {
		t.Errorf("no object: %v", err)
	}
	if _, err := Open("gs://bucket", ReadOptions{}); err == nil || !strings.Contains(err.Error(), "names a bucket") {
		t.Errorf("a bucket: %v", err)
	}
}
