package features

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResumableWrite: a write stopped after two commits keeps them (and
// the caller's progress); resuming it — the same identity — and writing
// the rest gives the bytes of an uninterrupted write, and leaves no
// partial files. A second run without --resume, a different identity and
// --resume with --restart are refused; --restart starts over.
func TestResumableWrite(t *testing.T) {
	dir := t.TempDir()
	meta := testMeta("a", "b", "c")
	meta.Created = "2026-01-01T00:00:00Z"
	batches, whole := uninterrupted(t, dir, meta, 4, 7)
	out := filepath.Join(dir, "out.arrow")
	id := map[string]string{"model": "m1"}
	ro := ResumeOptions{Identity: id, Created: meta.Created, Job: "test"}
	type progress struct {
		Read int `json:"read"`
	}
	w, err := CreateResumable(out, 4, meta, WriterOptions{WithID: true}, ro)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range batches[:2] {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(progress{Read: 10 * (i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if !w.Stop() {
		t.Fatal("Stop after two commits kept nothing")
	}
	bad := []struct {
		ro   ResumeOptions
		want string
	}{
		{ResumeOptions{Identity: id}, "rerun with --resume"},
		{ResumeOptions{Identity: map[string]string{"model": "m2"}, Resume: true}, `model ("m1" then, "m2" now)`},
		{ResumeOptions{Identity: id, Resume: true, Restart: true}, "exclude each other"},
	}
	for _, c := range bad {
		if _, err := CreateResumable(out, 4, meta, WriterOptions{WithID: true}, c.ro); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.ro, err, c.want)
		}
	}
	ro.Resume = true
	w, err = CreateResumable(out, 4, meta, WriterOptions{WithID: true}, ro)
	if err != nil {
		t.Fatal(err)
	}
	var p progress
	if err := w.Progress(&p); err != nil || p.Read != 20 || w.Resumed() != 14 {
		t.Fatalf("resumed %d rows, progress %+v (%v); want 14 rows, read 20", w.Resumed(), p, err)
	}
	for _, b := range batches[2:] {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(progress{Read: 99}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(whole)
	b, _ := os.ReadFile(out)
	if !bytes.Equal(a, b) {
		t.Errorf("resumed file differs from an uninterrupted write (%d vs %d bytes)", len(b), len(a))
	}
	left, _ := filepath.Glob(out + ".partial*")
	if len(left) != 0 {
		t.Errorf("partial files left: %v", left)
	}
	// --restart discards an interrupted write.
	out2 := filepath.Join(dir, "out2.arrow")
	w, _ = CreateResumable(out2, 4, meta, WriterOptions{WithID: true}, ResumeOptions{Identity: id})
	w.Write(batches[0])
	w.Commit(nil)
	w.Stop()
	w, err = CreateResumable(out2, 4, meta, WriterOptions{WithID: true}, ResumeOptions{Identity: id, Restart: true})
	if err != nil || w.Resumed() != 0 {
		t.Fatalf("restart: %v, resumed %d", err, w.Resumed())
	}
	w.Stop()
}
