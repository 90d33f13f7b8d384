package features

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shardFiles writes n shards of 7 rows (dimension dim, ids) and a manifest.
func shardFiles(t *testing.T, dir string, n, dim int, meta Metadata) (string, *ShardManifest) {
	t.Helper()
	m := &ShardManifest{Dim: dim, EncoderSHA256: meta.EncoderSHA256}
	for s := 0; s < n; s++ {
		b := Batch{Dim: dim}
		for i := 0; i < 7; i++ {
			for k := 0; k < dim; k++ {
				b.Features = append(b.Features, float32(100*s+10*i+k))
			}
			b.Labels = append(b.Labels, int32((s+i)%2))
			b.IDs = append(b.IDs, "s"+string(rune('a'+s))+string(rune('0'+i)))
		}
		name := filepath.Join("parts", "0000"+string(rune('0'+s))+".arrow")
		os.MkdirAll(filepath.Join(dir, "parts"), 0o755)
		// two record batches per shard
		if err := WriteFile(filepath.Join(dir, name), meta, WriterOptions{WithID: true},
			Batch{Dim: dim, Features: b.Features[:3*dim], Labels: b.Labels[:3], IDs: b.IDs[:3]},
			Batch{Dim: dim, Features: b.Features[3*dim:], Labels: b.Labels[3:], IDs: b.IDs[3:]}); err != nil {
			t.Fatal(err)
		}
		m.Shards = append(m.Shards, Shard{Path: name, Rows: 7})
		m.Rows += 7
	}
	path := filepath.Join(dir, "all.json")
	if err := WriteShardManifest(path, m); err != nil {
		t.Fatal(err)
	}
	return path, m
}

// A shard manifest opens as one file: the shards' rows in order, batch
// offsets of the whole, loads and copies like a file (#24).
func TestShardManifests(t *testing.T) {
	dir := t.TempDir()
	meta := Metadata{Classes: []string{"a", "b"}, EncoderSHA256: strings.Repeat("ab", 32), DataID: "d1"}
	path, _ := shardFiles(t, dir, 3, 2, meta)
	f, err := Open(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Rows() != 21 || f.Dim() != 2 || f.NumBatches() != 6 || len(f.Shards()) != 3 || !slices.Equal(f.Classes(), meta.Classes) {
		t.Fatalf("%d rows, dim %d, %d batches, %d shards", f.Rows(), f.Dim(), f.NumBatches(), len(f.Shards()))
	}
	var ids []string
	var offsets []int64
	f.Each(func(b Batch) error {
		ids, offsets = append(ids, b.IDs...), append(offsets, b.Offset)
		return nil
	})
	if !slices.Equal(offsets, []int64{0, 3, 7, 10, 14, 17}) || ids[7] != "sb0" || ids[20] != "sc6" {
		t.Errorf("offsets %v, ids %v", offsets, ids)
	}
	b4, err := f.Batch(4)
	if err != nil || b4.Offset != 14 || b4.IDs[0] != "sc0" {
		t.Errorf("batch 4: offset %d ids %v, %v", b4.Offset, b4.IDs, err)
	}
	m, err := f.Load()
	if err != nil || m.Rows != 21 || m.Row(8)[0] != 110 {
		t.Fatalf("load: %v, row 8 %v", err, m.Row(8))
	}
	out := filepath.Join(dir, "copy.arrow")
	if err := CopyRows(f, []int{0, 8, 20}, out, f.Metadata()); err != nil {
		t.Fatal(err)
	}
	if c, err := ReadAll(out, ReadOptions{}); err != nil || !slices.Equal(c.IDs, []string{"sa0", "sb1", "sc6"}) {
		t.Errorf("copy: %v %v", c.IDs, err)
	}
}

// What a manifest refuses, naming the shard: a missing one, one of another
// dimension or encoder, one whose rows changed, one of other classes.
func TestShardManifestRefusals(t *testing.T) {
	meta := Metadata{Classes: []string{"a", "b"}, EncoderSHA256: strings.Repeat("ab", 32)}
	for _, c := range []struct {
		name    string
		breakIt func(dir string, m *ShardManifest)
		want    string
	}{
		{"missing", func(dir string, m *ShardManifest) { os.Remove(filepath.Join(dir, m.Shards[1].Path)) }, "shard 2 of 3 (parts/00001.arrow) is missing"},
		{"dim", func(dir string, m *ShardManifest) {
			WriteFile(filepath.Join(dir, m.Shards[2].Path), meta, WriterOptions{}, Batch{Dim: 3, Features: make([]float32, 21), Labels: make([]int32, 7)})
		}, "shard 3 of 3 (parts/00002.arrow) has 3 features per row"},
		{"encoder", func(dir string, m *ShardManifest) {
			other := meta
			other.EncoderSHA256 = strings.Repeat("cd", 32)
			WriteFile(filepath.Join(dir, m.Shards[0].Path), other, WriterOptions{}, Batch{Dim: 2, Features: make([]float32, 14), Labels: make([]int32, 7)})
		}, "shard 1 of 3 (parts/00000.arrow) comes from encoder cdcdcdcdcdcd"},
		{"rows", func(dir string, m *ShardManifest) {
			WriteFile(filepath.Join(dir, m.Shards[1].Path), meta, WriterOptions{WithID: true}, Batch{Dim: 2, Features: make([]float32, 4), Labels: make([]int32, 2), IDs: []string{"x", "y"}})
		}, "holds 2 rows; the manifest says 7"},
		{"classes", func(dir string, m *ShardManifest) {
			other := meta
			other.Classes = []string{"a", "z"}
			WriteFile(filepath.Join(dir, m.Shards[1].Path), other, WriterOptions{WithID: true}, Batch{Dim: 2, Features: make([]float32, 14), Labels: make([]int32, 7), IDs: make([]string, 7)})
		}, "differs from shard 1"},
	} {
		dir := t.TempDir()
		path, m := shardFiles(t, dir, 3, 2, meta)
		c.breakIt(dir, m)
		if f, err := Open(path, ReadOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			if f != nil {
				f.Close()
			}
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
	// A manifest whose counts do not add up.
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format": "dpfeat.shards.v1", "rows": 9, "dim": 2, "shards": [{"path": "a.arrow", "rows": 7}]}`), 0o644)
	if _, err := Open(bad, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "hold 7 rows, the manifest says 9") {
		t.Errorf("bad counts: %v", err)
	}
}

// TestShardManifestCountsEachExampleOnce (#36 item 4): a manifest that
// lists one shard twice — by its path, through a symlink, or as a copy —
// would read more rows than the data has (150 of 100) and count an
// example twice; it is refused, naming the shards.
func TestShardManifestCountsEachExampleOnce(t *testing.T) {
	dir := t.TempDir()
	meta := Metadata{Classes: []string{"a", "b"}, EncoderSHA256: strings.Repeat("ab", 32), DataID: "d1"}
	_, m := shardFiles(t, dir, 2, 2, meta)
	b, _ := os.ReadFile(filepath.Join(dir, m.Shards[0].Path))
	os.WriteFile(filepath.Join(dir, "parts", "copy.arrow"), b, 0o644)
	link := filepath.Join(dir, "parts", "link.arrow")
	symlinks := os.Symlink("00000.arrow", link) == nil
	for _, c := range []struct {
		name, second, want string
	}{
		{"the same path", m.Shards[0].Path, "are one file"},
		{"a copy", "parts/copy.arrow", "hold the same example"},
		{"a symlink", "parts/link.arrow", "are one file"},
	} {
		if c.name == "a symlink" && !symlinks {
			continue
		}
		twice := &ShardManifest{Dim: m.Dim, EncoderSHA256: m.EncoderSHA256, Rows: 21,
			Shards: []Shard{m.Shards[0], m.Shards[1], {Path: c.second, Rows: 7}}}
		path := filepath.Join(dir, "twice.json")
		if err := WriteShardManifest(path, twice); err != nil {
			t.Fatal(err)
		}
		if f, err := Open(path, ReadOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			if err == nil {
				f.Close()
			}
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
