package fspath

import (
	"os"
	"path/filepath"
	"testing"
)

// TestResolveThroughLinks: an output spelled through a symlinked folder,
// with "..", or relative resolves to the same name, existing or not.
func TestResolveThroughLinks(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	want := filepath.Join(real, "out.arrow")
	for _, p := range []string{
		filepath.Join(link, "out.arrow"),
		filepath.Join(real, "..", "link", "out.arrow"),
		want,
	} {
		if got := Resolve(p); got != want {
			t.Errorf("Resolve(%s) = %s, want %s", p, got, want)
		}
	}
	if got := Resolve(filepath.Join(link, "new", "deeper", "x")); got != filepath.Join(real, "new", "deeper", "x") {
		t.Errorf("a path below a missing folder: %s", got)
	}
}
