package features

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// uninterrupted writes four random batches of dim columns (seeded) to
// DIR/whole.arrow in one go: what a resumed write must reproduce.
func uninterrupted(t *testing.T, dir string, meta Metadata, dim int, seed uint64) ([]Batch, string) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed))
	var batches []Batch
	for i := 0; i < 4; i++ {
		batches = append(batches, randomBatch(r, 7, dim, 3, true))
	}
	whole := filepath.Join(dir, "whole.arrow")
	if err := WriteFile(whole, meta, WriterOptions{WithID: true}, batches...); err != nil {
		t.Fatal(err)
	}
	return batches, whole
}

// An interrupted write resumed with CopyPartial gives the same bytes as an
// uninterrupted one.
func TestResumeGivesTheSameFile(t *testing.T) {
	dir := t.TempDir()
	meta := testMeta("a", "b", "c")
	batches, whole := uninterrupted(t, dir, meta, 5, 5)

	out := filepath.Join(dir, "out.arrow")
	partial := out + ".partial"
	w, err := Create(out, 5, meta, WriterOptions{WithID: true, Partial: partial})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches[:3] {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := w.Suspend(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("the destination exists after Suspend")
	}
	// A torn write after the last durable batch.
	f, _ := os.OpenFile(partial, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{0xff, 0xff, 0xff, 0xff, 0x10, 0, 0, 0, 1, 2, 3})
	f.Close()

	// Resume: only 2 of the 3 batches were recorded as durable.
	old := partial + ".old"
	if err := os.Rename(partial, old); err != nil {
		t.Fatal(err)
	}
	w2, err := Create(out, 5, meta, WriterOptions{WithID: true, Partial: partial})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := CopyPartial(old, 2, w2)
	if err != nil {
		t.Fatal(err)
	}
	if rows != 14 {
		t.Fatalf("recovered %d rows, want 14", rows)
	}
	for _, b := range batches[2:] {
		if err := w2.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(whole)
	b, _ := os.ReadFile(out)
	if !bytes.Equal(a, b) {
		t.Error("the resumed file differs from the uninterrupted one")
	}
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Error("the partial file is still there after Close")
	}

	// More batches than the partial holds, or different metadata: refused.
	w3, _ := Create(filepath.Join(dir, "x.arrow"), 5, meta, WriterOptions{WithID: true})
	defer w3.Abort()
	if _, err := CopyPartial(old, 4, w3); err == nil || !strings.Contains(err.Error(), "not intact") {
		t.Errorf("asking for 4 batches of 3: %v", err)
	}
	w4, _ := Create(filepath.Join(dir, "y.arrow"), 5, testMeta("a", "b", "z"), WriterOptions{WithID: true})
	defer w4.Abort()
	if _, err := CopyPartial(old, 1, w4); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Errorf("different metadata: %v", err)
	}
}
