package features

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestMain removes the benchmark's file when the run ends.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir) // made by MkdirTemp in benchFile, for the benchmark alone
	}
	os.Exit(code)
}

var (
	benchDir  string
	benchOnce sync.Once
	benchPath string
	benchErr  error
)

// benchFile writes, once per run, a 100,000 × 768 feature file of 10 record
// batches (about 307 MB), as an extraction of a ViT-B on a mid-sized data
// set would produce.
func benchFile(b *testing.B) string {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dpfeat-bench-")
		if err != nil {
			benchErr = err
			return
		}
		benchDir = dir
		benchPath = filepath.Join(dir, "bench-100k-768.arrow")
		r := rand.New(rand.NewPCG(1, 2))
		w, err := Create(benchPath, 768, testMeta(make10()...), WriterOptions{})
		if err != nil {
			benchErr = err
			return
		}
		for k := 0; k < 10; k++ {
			if benchErr = w.Write(randomBatch(r, 10_000, 768, 10, false)); benchErr != nil {
				return
			}
		}
		benchErr = w.Close()
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchPath
}

func make10() []string {
	return []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
}

// BenchmarkReadStream streams every batch (memory-mapped, zero copy, with
// the finiteness and label checks) and touches every value.
func BenchmarkReadStream(b *testing.B) {
	path := benchFile(b)
	b.ReportAllocs()
	b.ResetTimer()
	var rows int64
	for i := 0; i < b.N; i++ {
		f, err := Open(path, ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var sum float32
		err = f.Each(func(bt Batch) error {
			for _, v := range bt.Features {
				sum += v
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		rows += f.Rows()
		f.Close()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
}

// BenchmarkReadAllCopy loads the whole file into Go memory (one copy).
func BenchmarkReadAllCopy(b *testing.B) {
	path := benchFile(b)
	b.ReportAllocs()
	b.ResetTimer()
	var rows int64
	for i := 0; i < b.N; i++ {
		m, err := ReadAll(path, ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		rows += int64(m.Rows)
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
