package cli

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/orttest"
)

// canaryTemp points TMPDIR at a folder holding a canary file, for a test
// that no command removes what it did not create (#35 item 1); check
// fails if the canary is gone or a run left anything beside it.
func canaryTemp(t *testing.T) (check func(step string)) {
	t.Helper()
	tmp := t.TempDir()
	canary := filepath.Join(tmp, "canary.txt")
	if err := os.WriteFile(canary, []byte("the user's file"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	return func(step string) {
		t.Helper()
		if b, err := os.ReadFile(canary); err != nil || string(b) != "the user's file" {
			t.Fatalf("%s removed the canary in TMPDIR (%v): it deleted what it did not create", step, err)
		}
		ents, _ := os.ReadDir(tmp)
		for _, e := range ents {
			if e.Name() != "canary.txt" {
				t.Errorf("%s left %s in TMPDIR", step, e.Name())
			}
		}
	}
}

// TestNoRunRemovesWhatItDidNotCreate (#35 item 1): every command path
// that removes a folder (fit --runner's scratch folder, predict's
// temporary features, --out -'s buffer, a foreign file's conversion) is
// run, failing and succeeding, with TMPDIR pointing at a folder that
// holds a canary: the canary survives and nothing is left beside it. A
// fit --runner whose --out folder is missing once removed all of TMPDIR.
func TestNoRunRemovesWhatItDidNotCreate(t *testing.T) {
	check := canaryTemp(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	classes := []string{"a", "b", "c"}
	blobFile(t, p("train.arrow"), 240, 6, classes, "sha-1", 1)
	fitArgs := func(out string, extra ...string) []string {
		return append([]string{"fit", "--method", "dpls", "--train", p("train.arrow"), "--epsilon", "1", "--delta", "1e-5", "--out", out}, extra...)
	}
	for _, c := range []struct {
		step string
		args []string
		code int
		want string
	}{
		{"fit --runner into a missing folder", fitArgs(p("missing/c.safetensors"), "--runner", "prism"), 1, "does not exist"},
		{"fit into a missing folder", fitArgs(p("missing/c.safetensors")), 1, "does not exist"},
		{"fit --runner into a file's 'folder'", fitArgs(p("train.arrow/c.safetensors"), "--runner", "prism"), 1, "is not a folder"},
		{"fit --runner", fitArgs(p("ok.safetensors"), "--runner", "prism"), 0, ""},
		{"predict --out -", []string{"predict", "--classifier", p("ok.safetensors"), "--features", p("train.arrow"), "--out", "-"}, 0, ""},
	} {
		code, _, errs := run(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, %q", c.step, code, errs)
		}
		check(c.step)
	}
	if ents, _ := os.ReadDir(dir); slices.ContainsFunc(ents, func(e os.DirEntry) bool { return strings.Contains(e.Name(), ".runner-") }) {
		t.Error("fit --runner left its scratch folder beside --out")
	}
	// A crashed run's scratch folder for this output (exact sums of the
	// private data) goes with the next run (#36 note).
	stale := p(".ok.safetensors.runner-123")
	os.Mkdir(stale, 0o700)
	os.WriteFile(filepath.Join(stale, "sums"), []byte("exact sums"), 0o600)
	if code, _, errs := run(t, fitArgs(p("ok.safetensors"), "--runner", "prism", "--force")...); code != 0 {
		t.Errorf("fit --runner over a crashed run's scratch: %s", errs)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a crashed run's scratch folder was left")
	}
	if os.Getuid() != 0 { // root writes anywhere
		ro := p("readonly")
		os.Mkdir(ro, 0o555)
		if code, _, errs := run(t, fitArgs(filepath.Join(ro, "c.safetensors"), "--runner", "prism")...); code != 1 || !strings.Contains(errs, "cannot be written") {
			t.Errorf("a read-only --out folder: exit %d, %q", code, errs)
		}
		check("fit --runner into a read-only folder")
	}
	// A foreign file is converted in a temporary folder of its own.
	if code, _, errs := run(t, "inspect", "../testdata/foreign/compressed.npz"); code != 0 {
		t.Errorf("inspect a .npz: exit %d, %q", code, errs)
	}
	check("inspect of a .npz")
	if encode.InitRuntime("") == nil {
		data := p("images")
		imageFolder(t, data, classes, 2)
		if code, _, errs := run(t, "predict", "--classifier", p("ok.safetensors"), "--encoder", "../testdata/encoders/tiny-cnn.onnx", "--data", data, "--out", p("pred.csv")); code != 1 && code != 0 {
			t.Errorf("predict from images: exit %d, %q", code, errs)
		}
		check("predict from images")
	}
}

// TestDistributedExtractionNeverDestroys (#35 item 2): a forced extract
// --runner that fails validation, or at a worker, leaves the earlier
// manifest and its shards readable; an input inside the shard folder is
// refused before anything is touched; --restart discards only what
// dpfeat wrote, and the replacement leaves nothing of the earlier run.
func TestDistributedExtractionNeverDestroys(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	data := p("photos")
	imageFolder(t, data, []string{"cat", "dog"}, 6)
	model := "../testdata/encoders/tiny-cnn.onnx"
	extract := func(out string, extra ...string) (int, string) {
		args := append([]string{"extract", "--encoder", model, "--data", data, "--out", out, "--encoder-batch", "2", "--runner", "prism", "--shard-rows", "4", "--quiet"}, extra...)
		code, _, errs := run(t, args...)
		return code, errs
	}
	out := p("m.json")
	if code, errs := extract(out); code != 0 {
		t.Fatalf("extract --runner: exit %d: %s", code, errs)
	}
	want, err := features.ReadAll(out, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	intact := func(step string) {
		t.Helper()
		got, err := features.ReadAll(out, features.ReadOptions{})
		if err != nil || !slices.Equal(got.Data, want.Data) {
			t.Fatalf("%s: the earlier manifest no longer reads as it did (%v)", step, err)
		}
	}
	for _, c := range []struct {
		step string
		args []string
	}{
		{"--encoder-batch -1", []string{"--encoder-batch", "-1"}},
		{"a model that does not exist", []string{"--encoder", p("none.onnx")}},
		{"a missing --data", []string{"--data", p("nowhere")}},
		{"--shard-rows -5", []string{"--shard-rows", "-5"}},
	} {
		if code, errs := extract(out, append([]string{"--force"}, c.args...)...); code != 1 || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("%s: exit %d, %q", c.step, code, errs)
		}
		intact("--force with " + c.step)
	}
	// The image folder named as the shard folder of --out.
	photos := p("photos.shards")
	imageFolder(t, photos, []string{"cat", "dog"}, 2)
	for _, force := range []string{"--force", "--resume"} {
		code, _, errs := run(t, "extract", "--encoder", model, "--data", photos, "--out", p("photos.json"), "--runner", "prism", force)
		if code != 1 || !strings.Contains(errs, "puts its shards") {
			t.Errorf("--data inside the shard folder (%s): exit %d, %q", force, code, errs)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(photos, "cat")); len(ents) != 2 {
		t.Fatalf("the input images were touched: %d left", len(ents))
	}
	// A run that fails at a worker names the image and leaves the earlier
	// manifest as it was.
	os.WriteFile(filepath.Join(data, "dog", "zz-broken.png"), []byte("not a png"), 0o644)
	code, errs := extract(out, "--force")
	if code != 1 || !strings.Contains(errs, "zz-broken.png") {
		t.Fatalf("a worker's error: exit %d, %q", code, errs)
	}
	intact("a failed forced run")
	os.Remove(filepath.Join(data, "dog", "zz-broken.png"))
	work := p("m.shards.partial")
	os.RemoveAll(work) // this test's own run folder (what the failed run kept, if a shard finished)
	os.Mkdir(work, 0o755)
	// --restart discards only files dpfeat wrote.
	os.WriteFile(filepath.Join(work, "notes.txt"), []byte("mine"), 0o644)
	if code, errs := extract(out, "--resume"); code != 1 || !strings.Contains(errs, "--restart") {
		t.Errorf("--resume of a folder without its run record: exit %d, %q", code, errs)
	}
	if code, errs := extract(out, "--restart", "--force"); code != 1 || !strings.Contains(errs, "notes.txt") {
		t.Errorf("--restart over a folder with a user's file: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(work, "notes.txt")); err != nil {
		t.Fatal("--restart removed a file dpfeat did not write")
	}
	os.Remove(filepath.Join(work, "notes.txt"))
	if code, errs := extract(out, "--restart", "--force"); code != 0 {
		t.Fatalf("--restart --force: exit %d, %q", code, errs)
	}
	if got, err := features.ReadAll(out, features.ReadOptions{}); err != nil || got.Rows != want.Rows {
		t.Fatalf("the replaced manifest: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".replaced-") || e.Name() == "m.shards.partial" {
			t.Errorf("the replacement left %s", e.Name())
		}
	}
	// A job server that is not there (#35 item 15): Beam tried to
	// cross-compile a worker from sources that are not here, then waited
	// two minutes; now one line at once, and no folder is left.
	start := time.Now()
	code, errs = extract(p("e.json"), "--runner-option", "endpoint=127.0.0.1:1")
	if code != 1 || !strings.Contains(errs, "no job server answers at endpoint 127.0.0.1:1") || time.Since(start) > 20*time.Second {
		t.Errorf("an endpoint without a job server: exit %d after %s, %q", code, time.Since(start), errs)
	}
	for _, left := range []string{"e.shards", "e.shards.partial", "e.json"} {
		if _, err := os.Stat(p(left)); err == nil {
			t.Errorf("the failed run left %s", left)
		}
	}
	// A shard size past the data is one shard, not an overflow into a
	// negative size that wrote the dataset twice (#36 item 4).
	huge := p("huge.json")
	if code, errs := extract(huge, "--shard-rows", "9223372036854775807"); code != 0 {
		t.Fatalf("--shard-rows 2^63-1: exit %d, %q", code, errs)
	}
	if f, err := features.Open(huge, features.ReadOptions{}); err != nil || f.Rows() != int64(want.Rows) || len(f.Shards()) != 1 {
		t.Errorf("--shard-rows 2^63-1: %v", err)
	} else {
		f.Close()
	}
	// A damaged run record is refused, with the way out.
	os.Rename(p("m.shards"), work)
	os.Remove(out)
	os.WriteFile(filepath.Join(work, "run.json"), []byte("{}"), 0o644)
	if code, errs := extract(out, "--resume"); code != 1 || !strings.Contains(errs, "--restart") {
		t.Errorf("a damaged run record: exit %d, %q", code, errs)
	}
}

// idxFile writes an IDX image file of n random 28×28 images and its
// labels.
func idxFile(t *testing.T, dir string, n int) string {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	img := make([]byte, 16+n*28*28)
	binary.BigEndian.PutUint32(img, 0x803)
	binary.BigEndian.PutUint32(img[4:], uint32(n))
	binary.BigEndian.PutUint32(img[8:], 28)
	binary.BigEndian.PutUint32(img[12:], 28)
	for i := range img[16:] {
		img[16+i] = byte(i * 7 % 251)
	}
	lab := make([]byte, 8+n)
	binary.BigEndian.PutUint32(lab, 0x801)
	binary.BigEndian.PutUint32(lab[4:], uint32(n))
	for i := range lab[8:] {
		lab[8+i] = byte(i % 10)
	}
	path := filepath.Join(dir, "train-images-idx3-ubyte")
	os.WriteFile(path, img, 0o644)
	os.WriteFile(filepath.Join(dir, "train-labels-idx1-ubyte"), lab, 0o644)
	return path
}

// TestInterruptedDistributedExtractionResumes (#35 items 3, 4): Ctrl-C
// during extract --runner prints one line with the advice (none of
// Prism's structured log) and keeps the finished shards; a resume with
// another model, other flags or another source is refused in one short
// line; --resume — also past a shard left as a 0-byte partial — finishes
// a manifest equal to the single-machine file.
func TestInterruptedDistributedExtractionResumes(t *testing.T) {
	orttest.Need(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	data := idxFile(t, filepath.Join(dir, "idx"), 1500)
	model := "../testdata/encoders/tiny-cnn.onnx"
	out := filepath.Join(dir, "m.json")
	args := []string{"extract", "--encoder", model, "--data", data, "--out", out, "--encoder-batch", "1", "--runner", "prism", "--runner-workers", "2", "--shard-rows", "10", "--quiet"}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "DPFEAT_STOP_GRACE=20s")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(stderr)
	signalled := false
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if !signalled && strings.HasPrefix(sc.Text(), "dpfeat: shard ") {
			cmd.Process.Signal(os.Interrupt)
			signalled = true
		}
	}
	cmd.Wait()
	var other []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "dpfeat: shard ") && !strings.HasPrefix(l, "dpfeat: hashing") {
			other = append(other, l)
		}
	}
	if len(other) != 2 || !strings.Contains(other[0], "stopping") || !strings.Contains(other[1], "interrupted") || !strings.Contains(other[1], "--resume") {
		t.Fatalf("after Ctrl-C, stderr said (besides shard lines) %q", other)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("an interrupted run wrote its manifest")
	}
	// A resume reuses the finished shards only of the same run (#35
	// item 3): not with another model, other flags or another source.
	resume := func(extra ...string) (int, string) {
		res, err := exec.Command(bin, append(append(slices.Clone(args), "--resume"), extra...)...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return code, string(res)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--encoder", "../testdata/encoders/tiny-fp16.onnx"}, "model sha256 (changed)"},
		{[]string{"--encoder-batch", "2"}, `batch ("1" then, "2" now)`},
		{[]string{"--shard-rows", "20"}, "--shard-rows"},
	} {
		code, msg := resume(c.args...)
		if code != 1 || !strings.Contains(msg, c.want) || strings.Count(strings.TrimSpace(msg), "\n") > 1 || len(msg) > 500 {
			t.Errorf("--resume %v: exit %d, %q", c.args, code, msg)
		}
	}
	raw, _ := os.ReadFile(data)
	changed := slices.Clone(raw)
	changed[len(changed)-1] ^= 0xff // one pixel of the last image
	os.WriteFile(data, changed, 0o644)
	if code, msg := resume(); code != 1 || !strings.Contains(msg, "data identity (the source's examples changed)") {
		t.Errorf("--resume over another source: exit %d, %q", code, msg)
	}
	os.WriteFile(data, raw, 0o644)
	// A shard cut before its first record batch, as a kill leaves it.
	work := filepath.Join(dir, "m.shards.partial")
	os.WriteFile(filepath.Join(work, "00100.arrow.partial"), nil, 0o644)
	start := time.Now()
	res, err := exec.Command(bin, append(args, "--resume")...).CombinedOutput()
	if err != nil {
		t.Fatalf("--resume: %v\n%s", err, res)
	}
	single := filepath.Join(dir, "single.arrow")
	if res, err := exec.Command(bin, "extract", "--encoder", model, "--data", data, "--out", single, "--encoder-batch", "1", "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("single machine: %v\n%s", err, res)
	}
	a, _ := features.ReadAll(single, features.ReadOptions{})
	b, err := features.ReadAll(out, features.ReadOptions{})
	if err != nil || a.Rows != 1500 || !slices.Equal(a.Data, b.Data) || !slices.Equal(a.IDs, b.IDs) {
		t.Fatalf("the resumed manifest differs from the single-machine file (%v)", err)
	}
	t.Logf("resume took %s", time.Since(start))
}

// fixBatch rewrites an ONNX model's first input's first axis to a fixed
// size (dim_value) — a model exported with a fixed batch — by editing the
// protobuf: ModelProto.graph (7) → GraphProto.input (11, the first) →
// ValueInfoProto.type (2) → TypeProto.tensor_type (1) → shape (2) →
// dim (1, the first) → dim_value (1).
func fixBatch(t *testing.T, model []byte, batch int64) []byte {
	t.Helper()
	// edit rewrites the first field num of msg (a message) with fn.
	var edit func(msg []byte, path []protowire.Number, leaf func([]byte) []byte) []byte
	edit = func(msg []byte, path []protowire.Number, leaf func([]byte) []byte) []byte {
		if len(path) == 0 {
			return leaf(msg)
		}
		var out []byte
		done := false
		for b := msg; len(b) > 0; {
			num, typ, n := protowire.ConsumeTag(b)
			if n < 0 {
				t.Fatal("bad protobuf")
			}
			m := protowire.ConsumeFieldValue(num, typ, b[n:])
			if m < 0 {
				t.Fatal("bad protobuf")
			}
			field := b[:n+m]
			if !done && num == path[0] && typ == protowire.BytesType {
				v, _ := protowire.ConsumeBytes(b[n:])
				field = protowire.AppendTag(nil, num, protowire.BytesType)
				field = protowire.AppendBytes(field, edit(v, path[1:], leaf))
				done = true
			}
			out = append(out, field...)
			b = b[n+m:]
		}
		if !done {
			t.Fatalf("field %d not found", path[0])
		}
		return out
	}
	return edit(model, []protowire.Number{7, 11, 2, 1, 2, 1}, func(dim []byte) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(batch))
	})
}

// TestFixedBatchModelIsNamed (#35 item 15): a model exported with a fixed
// batch of 1 is refused before extracting, naming the model and the
// --encoder-batch it needs; with it, the extraction runs.
func TestFixedBatchModelIsNamed(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	b, err := os.ReadFile("../testdata/encoders/tiny-cnn.onnx")
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "fixed.onnx")
	os.WriteFile(model, fixBatch(t, b, 1), 0o644)
	man, _ := os.ReadFile("../testdata/encoders/tiny-cnn.json")
	var m map[string]any
	json.Unmarshal(man, &m)
	delete(m, "sha256")
	m["file"] = "fixed.onnx"
	man, _ = json.Marshal(m)
	os.WriteFile(filepath.Join(dir, "fixed.json"), man, 0o644)
	data := filepath.Join(dir, "images")
	imageFolder(t, data, []string{"cat", "dog"}, 3)
	code, _, errs := run(t, "extract", "--encoder", model, "--data", data, "--out", filepath.Join(dir, "f.arrow"), "--quiet")
	if code != 1 || !strings.Contains(errs, "fixed.onnx takes batches of exactly 1") || !strings.Contains(errs, "--encoder-batch 1") {
		t.Fatalf("a fixed-batch model: exit %d, %q", code, errs)
	}
	if code, _, errs := run(t, "extract", "--encoder", model, "--data", data, "--out", filepath.Join(dir, "f.arrow"), "--encoder-batch", "1", "--quiet"); code != 0 {
		t.Fatalf("--encoder-batch 1: exit %d, %q", code, errs)
	}
}

// TestOutputDashIsNotAFile (#35 item 15): --out - is standard output
// where a command writes one (predict, export), and refused elsewhere: it
// once wrote a file named "-".
func TestOutputDashIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	blobFile(t, "train.arrow", 60, 4, []string{"a", "b"}, "s", 1)
	for _, args := range [][]string{
		{"fit", "--method", "dpls", "--train", "train.arrow", "--epsilon", "1", "--delta", "1e-3", "--out", "-"},
		{"convert", "--in", "train.arrow", "--out", "-"},
		{"split", "--in", "train.arrow", "--train", "-", "--val", "v.arrow"},
		{"imbalance", "--in", "train.arrow", "--out", "-", "--ratio", "2"},
	} {
		code, _, errs := run(t, args...)
		if code != 1 || !strings.Contains(errs, "writes a file, not standard output") {
			t.Errorf("%s --out -: exit %d, %q", args[0], code, errs)
		}
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("a file named - was written")
	}
}
