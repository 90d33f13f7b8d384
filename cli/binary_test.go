package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/internal/backend"
	"github.com/dpfeat/dpfeat/internal/badinputs"
	"github.com/dpfeat/dpfeat/internal/orttest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// buildBinary builds dpfeat once for the tests that run it as a process.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dpfeat-bin-*")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "dpfeat")
		if out, err := exec.Command("go", append(append([]string{"build"}, backendTags()...), "-o", binPath, "..")...).CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// backendTags are the build flags that give a binary this test binary's
// linear-algebra backend: a fit the tests compare across processes (on
// Beam workers and on one machine) then takes the same eigenvectors,
// whose signs differ between LAPACK's dsyevd and the pure-Go solver.
func backendTags() []string {
	if backend.Accelerated() {
		return []string{"-tags", "openblas"}
	}
	return nil
}

// TestMemoryLimits (#16 items 6, 9) runs the dpfeat binary under an
// address-space limit (ulimit -v): a fit whose D×D statistics exceed
// --memory and a sweep grid of 10⁹ settings are both refused at once —
// exit 1, one line, no Go runtime trace — instead of allocating until the
// limit kills them.
func TestMemoryLimits(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash for ulimit")
	}
	dir := t.TempDir()
	bin := buildBinary(t)
	train := filepath.Join(dir, "wide.arrow")
	blobFile(t, train, 20, 3000, []string{"a", "b"}, "s", 1)
	cfg := filepath.Join(dir, "huge.yaml")
	os.WriteFile(cfg, []byte("datasets: [{train: wide.arrow, test: wide.arrow}]\nepsilons: [1]\ndelta: 1e-5\n"+
		"methods:\n  dpfc:\n    lr: {log: [0.1, 10], num: 1000}\n    steps: {linear: [1, 1000], num: 1000}\n    clip_grad: {log: [0.1, 10], num: 1000}\n"), 0o644)
	// A small file whose schema claims 10⁷ features per row (item 7).
	liar := filepath.Join(dir, "liar.arrow")
	blobFile(t, liar, 1, 7777, []string{"a", "b"}, "s", 1)
	raw, _ := os.ReadFile(liar)
	os.WriteFile(liar, bytes.ReplaceAll(raw, []byte{0x61, 0x1e, 0, 0}, []byte{0x80, 0x96, 0x98, 0}), 0o644)
	// An image folder extracted with an absurd --encoder-batch (item 8).
	images := filepath.Join(dir, "images")
	imageFolder(t, images, []string{"cat", "dog"}, 3)
	for _, c := range []struct {
		args, want string
		code       int
	}{
		{"fit --method dpls --train " + train + " --epsilon 1 --delta 1e-5 --memory 64MiB --out " + filepath.Join(dir, "c.safetensors"), "more than the memory budget", 1},
		{"sweep --config " + cfg + " --out " + filepath.Join(dir, "r.arrow"), "makes 1000000000 jobs", 1},
		{"fit --method dpls --train " + liar + " --epsilon 1 --delta 1e-5 --out " + filepath.Join(dir, "l.safetensors"), "liar.arrow", 1},
		{"extract --encoder ../testdata/encoders/tiny-cnn.onnx --data " + images + " --encoder-batch 10000000 --out " + filepath.Join(dir, "f.arrow"), "6 rows", 0},
	} {
		// 4 GiB of address space: enough for the runtime and ONNX Runtime,
		// not for the work asked.
		cmd := exec.Command("bash", "-c", "ulimit -v 4194304; exec "+bin+" "+c.args)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		msg := lines[len(lines)-1] // notes may come first; the error is one line
		if code != c.code || !strings.Contains(msg, c.want) || strings.Contains(string(out), "goroutine") {
			t.Errorf("%s: exit %d, %q", strings.Fields(c.args)[0], code, msg)
		}
	}
}

// TestBadInputCorpusUnderMemoryLimit (#35 items 6, 7, 8, 15; acceptance):
// a slice of the bad-input corpus through the binary under a 4 GiB
// address-space limit — NumPy archives that claim terabytes, a real
// deflate bomb of 3·10⁷ labels for 40 rows, a damaged CRC, a manifest of
// 20,000 shards, one that climbs out of its folder: each is refused in
// one line naming the file, exit 1, never a Go runtime trace; an IDX
// source of three 10⁸-pixel images extracts within the limit.
func TestBadInputCorpusUnderMemoryLimit(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash for ulimit")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	cases, err := badinputs.Write(dir, 30_000_000)
	if err != nil {
		t.Fatal(err)
	}
	limited := func(args string) (int, string) {
		cmd := exec.Command("bash", "-c", "ulimit -v 4194304; exec "+bin+" "+args)
		cmd.Dir = dir
		if lib := encode.RuntimeLibrary(); lib != "" {
			cmd.Env = append(os.Environ(), "ONNXRUNTIME_LIB="+lib) // (the tests' binary knows no path of its own)
		}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return code, string(out)
	}
	for _, c := range cases {
		code, out := limited("inspect " + c.File)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 1 || len(lines) != 1 || !strings.Contains(out, c.File) || !strings.Contains(out, c.Want) || strings.Contains(out, "goroutine") {
			t.Errorf("%s: exit %d, %q", c.Name, code, out)
		}
	}
	if err := encode.InitRuntime(""); err != nil {
		return // (the extraction needs ONNX Runtime; TestExtractCommand says whether it must be here)
	}
	bomb, err := badinputs.WriteIDXBomb(dir)
	if err != nil {
		t.Fatal(err)
	}
	model, _ := filepath.Abs("../testdata/encoders/tiny-cnn.onnx")
	code, out := limited("extract --quiet --encoder " + model + " --data " + bomb.File + " --out bomb.arrow")
	if code != 0 || strings.Contains(out, "goroutine") {
		t.Errorf("%s: exit %d, %q", bomb.Name, code, out)
	}
}

// TestSignalsStopABlockedRun (#16 items 2, 10; #35 item 5): extract
// blocked in open() of a FIFO cannot notice Ctrl-C, and it has saved
// nothing that a stop at a safe point would keep: the first signal quits
// at once, not after the grace period (an hour here) — exit 130, never a
// hang; a second signal changes nothing.
func TestSignalsStopABlockedRun(t *testing.T) {
	bin := buildBinary(t)
	for _, twice := range []bool{false, true} {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "x-images-idx3-ubyte")
		for _, p := range []string{fifo, filepath.Join(dir, "x-labels-idx1-ubyte")} {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}
		cmd := exec.Command(bin, "extract", "--encoder", "../testdata/encoders/tiny-cnn.onnx", "--data", fifo, "--out", filepath.Join(dir, "f.arrow"))
		cmd.Env = append(os.Environ(), "DPFEAT_STOP_GRACE=1h")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(700 * time.Millisecond) // blocked in open() by now
		start := time.Now()
		cmd.Process.Signal(os.Interrupt)
		if twice {
			time.Sleep(200 * time.Millisecond)
			cmd.Process.Signal(os.Interrupt)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("twice %v: still running 10 s after the signal: %s", twice, stderr.String())
		}
		if code := cmd.ProcessState.ExitCode(); code != 130 || time.Since(start) > 3*time.Second {
			t.Errorf("twice %v: exit %d after %s: %s", twice, code, time.Since(start), stderr.String())
		}
	}
}

// TestSlimBinaryHandsOverRunnerCommands (#35 item 16): the nobeam build
// (make build's bin/dpfeat) runs every command but --runner ones itself,
// without Beam linked; a --runner command goes to dpfeat-beam beside it —
// which must then be there, or the command says so in one line.
func TestSlimBinaryHandsOverRunnerCommands(t *testing.T) {
	orttest.Need(t)
	beamBin := buildBinary(t)
	dir := t.TempDir()
	slim := filepath.Join(dir, "dpfeat")
	if out, err := exec.Command("go", "build", "-tags", "nobeam", "-o", slim, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags nobeam: %v\n%s", err, out)
	}
	if out, err := exec.Command("go", "list", "-tags", "nobeam", "-deps", "..").Output(); err != nil || strings.Contains(string(out), "apache/beam") {
		t.Fatalf("the nobeam build links Beam (%v)", err)
	}
	data := filepath.Join(dir, "images")
	imageFolder(t, data, []string{"cat", "dog"}, 3)
	args := []string{"extract", "--encoder", "../testdata/encoders/tiny-cnn.onnx", "--data", data, "--out", filepath.Join(dir, "m.json"), "--runner", "prism", "--quiet"}
	out, err := exec.Command(slim, args...).CombinedOutput()
	if code := procExit(err); code != 1 || !strings.Contains(string(out), "dpfeat-beam") || strings.Count(strings.TrimSpace(string(out)), "\n") > 0 {
		t.Fatalf("--runner without dpfeat-beam: exit %d, %q", code, out)
	}
	if err := os.Symlink(beamBin, filepath.Join(dir, "dpfeat-beam")); err != nil {
		t.Skip("no symlinks:", err)
	}
	if out, err := exec.Command(slim, args...).CombinedOutput(); err != nil || !strings.Contains(string(out), "runner prism") {
		t.Fatalf("--runner through dpfeat-beam: %v, %q", err, out)
	}
	if out, err := exec.Command(slim, "inspect", filepath.Join(dir, "m.json")).CombinedOutput(); err != nil || !strings.Contains(string(out), "rows:        6") {
		t.Fatalf("inspect in the nobeam build: %v, %q", err, out)
	}
}

// procExit is a finished process's exit status (−1 when it did not run).
func procExit(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
