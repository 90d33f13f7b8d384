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

// drain reads a dataset to the end or the first error.
func drain(ds Dataset) {
	defer ds.Close()
	for i := 0; i < 1<<16; i++ {
		if _, err := ds.Next(); err != nil {
			return
		}
	}
}

// FuzzIDX feeds arbitrary image and label files (raw or gzipped) to the IDX
// reader.
// FuzzOpenForeign feeds the readers of other writers' files (Parquet,
// NumPy, CSV, Arrow streams) arbitrary bytes: an error, never a panic or an
// allocation the file cannot back.
func FuzzOpenForeign(f *testing.F) {
	exts := []string{".npy", ".npz", ".csv", ".parquet", ".arrows", ".tsv"}
	for i, name := range []string{"fortran-f8.npy", "compressed.npz", "classes.npz", "big-endian-f4.npy"} {
		if b, err := os.ReadFile(filepath.Join("..", "testdata", "foreign", name)); err == nil {
			f.Add(b, uint8(map[bool]int{true: 0, false: 1}[i != 1 && i != 2]))
		}
	}
	f.Add([]byte("id,a,b,label\nx,1,2,cat\ny,3,4,dog\n"), uint8(2))
	f.Add([]byte("1\t2\t0\n3\t4\t1\n"), uint8(5))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, ext uint8) {
		path := filepath.Join(dir, "fuzz"+exts[int(ext)%len(exts)])
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if ff, err := Open(path, ReadOptions{Import: ImportOptions{LabelColumn: "2"}}); err == nil {
			_, _ = ff.Load()
			ff.Close()
		}
		if ff, err := Open(path, ReadOptions{}); err == nil {
			_, _ = ff.Load()
			ff.Close()
		}
	})
}

func FuzzIDX(f *testing.F) {
	f.Add(idxBytes([]int{2, 2, 2}, make([]byte, 8)), idxBytes([]int{2}, []byte{1, 2}))
	f.Add(gz(idxBytes([]int{1, 3, 3}, make([]byte, 9))), gz(idxBytes([]int{1}, []byte{9})))
	f.Add(idxBytes([]int{5, 28, 28}, make([]byte, 100)), idxBytes([]int{5}, []byte{1}))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, img, lab []byte) {
		p := filepath.Join(dir, "train-images-idx3-ubyte")
		if err := os.WriteFile(p, img, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "train-labels-idx1-ubyte"), lab, 0o644); err != nil {
			t.Fatal(err)
		}
		if ds, err := OpenDataset(p, DatasetOptions{}); err == nil {
			drain(ds)
		}
	})
}

// FuzzCIFAR feeds arbitrary batches to the CIFAR-10 and CIFAR-100 readers.
func FuzzCIFAR(f *testing.F) {
	f.Add(cifarRecord([]byte{3}, 1, 2, 3), false)
	f.Add(cifarRecord([]byte{4, 99}, 1, 2, 3), true)
	f.Add(make([]byte, 3073*2), false)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, hundred bool) {
		name := "data_batch_1.bin"
		if hundred {
			name = "train.bin"
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if ds, err := OpenDataset(p, DatasetOptions{}); err == nil {
			drain(ds)
		}
	})
}
