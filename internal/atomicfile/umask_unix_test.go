//go:build unix

package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func umask(m int) int { return syscall.Umask(m) }

// TestWriteModes (#35 item 13): a new file gets 0666 less the umask, as a
// shell's redirection gives it, under umask 022 and 077 alike; a replaced
// file keeps its mode.
func TestWriteModes(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}, {0o002, 0o664}} {
		p := filepath.Join(dir, fmt.Sprintf("f%03o", c.umask))
		old := umask(c.umask)
		err := WriteBytes(p, []byte("a"))
		umask(old)
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != c.want {
			t.Errorf("umask %03o: new file mode %v, want %v", c.umask, st.Mode().Perm(), c.want)
		}
	}
	p := filepath.Join(dir, "f022")
	os.Chmod(p, 0o640)
	if err := WriteBytes(p, []byte("b")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("replaced file mode %v, want the old 0640", st.Mode().Perm())
	}
}
