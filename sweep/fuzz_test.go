package sweep

import (
	"path/filepath"
	"testing"
)

// FuzzConfig feeds arbitrary YAML to the sweep configuration parser
// (#16): it may refuse it but must never panic, hang or allocate by a
// grid's size before counting it.
func FuzzConfig(f *testing.F) {
	dir := f.TempDir()
	blobFile(f, filepath.Join(dir, "train.arrow"), 30, 1, false)
	f.Add([]byte("datasets: [{train: train.arrow, test: train.arrow}]\nmethods: {dpls: {}, dpfc: {lr: [1, 2]}}\nepsilons: [1]\ndelta: 1e-5\nseeds: 2\n"))
	f.Add([]byte("datasets: [{train: train.arrow, test: train.arrow}]\nmethods: {dpfc: {lr: {log: [0.1, 10], num: 1000}, steps: {linear: [1, 9], num: 1000}}}\nepsilons: [1]\ndelta: 1e-5\n"))
	f.Add([]byte("selection: {mode: private}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data, dir)
		if err != nil {
			return
		}
		if n, err := c.CountJobs(); err != nil || n > DefaultMaxJobs {
			t.Fatalf("an accepted configuration counts %d jobs (%v)", n, err)
		}
	})
}
