package features

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen feeds arbitrary bytes to the feature-file reader: it may refuse
// them, but must never panic or hang. CI runs it for seconds (make fuzz-smoke),
// longer runs are by hand: go test ./features -fuzz FuzzOpen -fuzztime 10m.
func FuzzOpen(f *testing.F) {
	if golden, err := os.ReadFile(goldenPath); err == nil {
		f.Add(golden)
		f.Add(golden[:len(golden)-10])
	}
	f.Add([]byte("ARROW1\x00\x00ARROW1"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.arrow")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, noMmap := range []bool{false, true} {
			ff, err := Open(path, ReadOptions{NoMmap: noMmap})
			if err != nil {
				continue
			}
			if m, err := ff.Load(); err == nil && len(m.Data) != m.Rows*m.Dim {
				t.Fatalf("Load: %d values for %d×%d", len(m.Data), m.Rows, m.Dim)
			}
			ff.Close()
		}
	})
}
