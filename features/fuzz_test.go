package features

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/internal/badinputs"
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

// FuzzNumPy feeds the NumPy readers (.npy features with .npy labels, and
// .npz archives) arbitrary bytes, seeded with the bad-input corpus: an
// error or a file whose values match its shape, never a panic or an
// allocation the bytes cannot back (#35 items 6, 8).
func FuzzNumPy(f *testing.F) {
	for _, name := range []string{"fortran-f8.npy", "compressed.npz", "classes.npz", "big-endian-f4.npy"} {
		if b, err := os.ReadFile(filepath.Join("..", "testdata", "foreign", name)); err == nil {
			f.Add(b, badinputs.NPY("<i8", false, []int{2}, make([]byte, 16)))
		}
	}
	seeds := f.TempDir()
	if cases, err := badinputs.Write(seeds, 1000); err == nil {
		for _, c := range cases {
			if b, err := os.ReadFile(filepath.Join(seeds, c.File)); err == nil && len(b) < 1<<20 && strings.HasSuffix(c.File, ".npz") {
				f.Add(b, []byte(nil))
			}
		}
	}
	f.Add(badinputs.NPY("<f4", false, []int{2, 2}, make([]byte, 16)), badinputs.NPY("<U1000000000000", false, []int{0}, nil))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data, labels []byte) {
		ext := ".npy"
		if len(data) >= 2 && data[0] == 'P' && data[1] == 'K' {
			ext = ".npz"
		}
		path, lpath := filepath.Join(dir, "fuzz"+ext), filepath.Join(dir, "labels.npy")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		opt := ReadOptions{}
		if ext == ".npy" && labels != nil {
			if err := os.WriteFile(lpath, labels, 0o644); err != nil {
				t.Fatal(err)
			}
			opt.Import.Labels = lpath
		}
		if ff, err := Open(path, opt); err == nil {
			if m, err := ff.Load(); err == nil && len(m.Data) != m.Rows*m.Dim {
				t.Fatalf("Load: %d values for %d×%d", len(m.Data), m.Rows, m.Dim)
			}
			ff.Close()
		}
	})
}

// FuzzCSV feeds the CSV and TSV reader arbitrary text: a byte-order mark,
// quoted fields, ragged rows, duplicate names (#35 item 9).
func FuzzCSV(f *testing.F) {
	f.Add([]byte("id,a,b,label\nx,1,2,cat\ny,3,4,dog\n"), false)
	f.Add([]byte("\ufefflabel,a,b\n0,1,2\n1,3,4\n"), false)
	f.Add([]byte("label,a,label\n0,1,2\n"), false)
	f.Add([]byte(",a,b,label\n0,1,2,x\n1,3,4,y\n"), false)
	f.Add([]byte("1\t2\t0\n3\t4\t1\n"), true)
	f.Add([]byte("a,b,label\n\"1\",2,\"SSN-078-05-1120\"\n"), false)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, tab bool) {
		path := filepath.Join(dir, "fuzz.csv")
		if tab {
			path = filepath.Join(dir, "fuzz.tsv")
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opt := range []ImportOptions{{}, {LabelColumn: "2"}, {IDColumn: ""}} {
			if ff, err := Open(path, ReadOptions{Import: opt}); err == nil {
				if m, err := ff.Load(); err == nil && len(m.Data) != m.Rows*m.Dim {
					t.Fatalf("Load: %d values for %d×%d", len(m.Data), m.Rows, m.Dim)
				}
				ff.Close()
			}
		}
	})
}

// FuzzIDX feeds arbitrary image and label files (raw or gzipped) to the IDX
// reader.
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
