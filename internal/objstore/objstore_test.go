package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/internal/s3test"
)

func TestPaths(t *testing.T) {
	for _, c := range []struct {
		p, dir, base string
		remote       bool
	}{
		{"gs://bucket/x/train.json", "gs://bucket/x", "train.json", true},
		{"s3://b/k", "s3://b", "k", true},
		{"memfs://train.json", "memfs://", "train.json", true},
		{"/data/train.json", "/data", "train.json", false},
		{"train.json", ".", "train.json", false},
		{"c:/x", "c:", "x", false}, // (a scheme is followed by "://")
	} {
		if IsRemote(c.p) != c.remote || Dir(c.p) != c.dir || Base(c.p) != c.base {
			t.Errorf("%s: remote %v dir %q base %q; want %v %q %q", c.p, IsRemote(c.p), Dir(c.p), Base(c.p), c.remote, c.dir, c.base)
		}
	}
	for _, c := range [][3]string{
		{"gs://b/x", "train.shards/0a/00001.arrow", "gs://b/x/train.shards/0a/00001.arrow"},
		{"gs://b/x/", "y", "gs://b/x/y"},
		{"memfs://", "a/b", "memfs://a/b"},
		{"/tmp/x", "a/b", filepath.Join("/tmp/x", "a", "b")},
	} {
		if got := Join(c[0], c[1]); got != c[2] {
			t.Errorf("Join(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
	for p, ok := range map[string]bool{
		"gs://b/k": true, "gs://b": false, "gs://b/": false, "gs://b/x/../k": false, "gs://b/./k": false,
		"s3://b/k/": false, "memfs://k": true, "memfs://": false, "/local/anything/../x": true,
	} {
		if err := CheckName(p); (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v, want ok %v", p, err, ok)
		}
	}
}

// TestStores: every operation on Beam's in-memory file system and on
// its s3:// one (the AWS SDK's client against an S3 served here,
// s3test), through the registry as gs:// goes.
func TestStores(t *testing.T) {
	s3test.Serve(t, "objstore-test")
	for _, dir := range []string{"memfs://objstore-test/run", "s3://objstore-test/run"} {
		t.Run(Scheme(dir), func(t *testing.T) { testStore(t, dir) })
	}
}

func testStore(t *testing.T, dir string) {
	ctx := context.Background()
	p := Join(dir, "a.json")
	if ok, err := Exists(ctx, p); ok || err != nil {
		t.Fatalf("Exists before writing: %v %v", ok, err)
	}
	if _, err := ReadFile(ctx, p, 10); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadFile of nothing: %v, want ErrNotExist", err)
	}
	if _, err := Size(ctx, p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Size of nothing: %v, want ErrNotExist", err)
	}
	if err := WriteFile(ctx, p, []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(ctx, p, 100); err != nil || string(b) != `{"a":1}` {
		t.Fatalf("ReadFile: %q %v", b, err)
	}
	if _, err := ReadFile(ctx, p, 3); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadFile over its limit: %v", err)
	}
	s1, _ := Stamp(ctx, p)
	WriteFile(ctx, p, []byte(`{"a":22}`))
	if s2, _ := Stamp(ctx, p); s2 == s1 {
		t.Errorf("a replaced object keeps its stamp %s", s1)
	}

	// Put and Fetch: a local file up and back, the copy unlinked.
	local := filepath.Join(t.TempDir(), "shard.arrow")
	data := bytes.Repeat([]byte("0123456789"), 10000)
	os.WriteFile(local, data, 0o644)
	q := Join(dir, "sub", "00000.arrow")
	if err := Put(ctx, local, q); err != nil {
		t.Fatal(err)
	}
	f, err := Fetch(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := os.Stat(f.Name()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the fetched copy %s is still linked (%v)", f.Name(), err)
	}
	got, _ := io.ReadAll(f)
	if !bytes.Equal(got, data) {
		t.Fatalf("fetched %d bytes, put %d", len(got), len(data))
	}
	if _, err := Fetch(ctx, Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Fetch of nothing: %v", err)
	}

	// An upload that fails part-way is not committed (GCS and S3; Beam's
	// memfs commits whatever it got).
	if Scheme(dir) != "memfs" {
		fs, _ := fsOf(ctx, dir)
		cut := Join(dir, "cut.arrow")
		if err := write(ctx, fs, cut, io.MultiReader(bytes.NewReader(data), failingReader{})); err == nil {
			t.Fatal("an upload whose source failed reports no error")
		}
		if ok, _ := Exists(ctx, cut); ok {
			t.Errorf("an upload whose source failed part-way left %s", cut)
		}
	}

	// List keeps one level below the folder.
	if names, err := List(ctx, dir, "*"); err != nil || !slices.Equal(names, []string{p}) {
		t.Errorf("List(%s, *) = %v, %v; want [%s]", dir, names, err, p)
	}
	if names, _ := List(ctx, Join(dir, "sub"), "*.arrow"); !slices.Equal(names, []string{q}) {
		t.Errorf("List(sub, *.arrow) = %v", names)
	}
	for _, x := range []string{p, q, Join(dir, "none")} {
		if err := Remove(ctx, x); err != nil {
			t.Fatal(err)
		}
		if ok, _ := Exists(ctx, x); ok {
			t.Errorf("%s is there after Remove", x)
		}
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("the source failed") }

// TestUnregistered: a scheme this build has no file system for names the
// Beam build.
func TestUnregistered(t *testing.T) {
	_, err := ReadFile(context.Background(), "hdfs://nn/x", 10)
	if err == nil || !strings.Contains(err.Error(), "dpfeat-beam") {
		t.Fatalf("%v", err)
	}
}

// A manifest's shard paths are relative to its folder, local or remote.
func ExampleJoin() {
	manifest := "gs://bucket/fmnist/train.json"
	fmt.Println(Join(Dir(manifest), "train.shards/00000.arrow"))
	// Output: gs://bucket/fmnist/train.shards/00000.arrow
}
