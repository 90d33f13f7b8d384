package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMemoryLimits (#16 items 6, 9) runs the dpfeat binary under an
// address-space limit (ulimit -v): a fit whose D×D statistics exceed
// --memory and a sweep grid of 10⁹ settings are both refused at once —
// exit 1, one line, no Go runtime trace — instead of allocating until the
// limit kills them.
func TestMemoryLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash for ulimit")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "dpfeat")
	build := exec.Command("go", "build", "-o", bin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	train := filepath.Join(dir, "wide.arrow")
	blobFile(t, train, 20, 3000, []string{"a", "b"}, "s", 1)
	cfg := filepath.Join(dir, "huge.yaml")
	os.WriteFile(cfg, []byte("datasets: [{train: wide.arrow, test: wide.arrow}]\nepsilons: [1]\ndelta: 1e-5\n"+
		"methods:\n  dpfc:\n    lr: {log: [0.1, 10], num: 1000}\n    steps: {linear: [1, 1000], num: 1000}\n    clip_grad: {log: [0.1, 10], num: 1000}\n"), 0o644)
	for _, c := range []struct {
		args, want string
	}{
		{"fit --method dpls --train " + train + " --epsilon 1 --delta 1e-5 --memory 64MiB --out " + filepath.Join(dir, "c.safetensors"), "more than the memory budget"},
		{"sweep --config " + cfg + " --out " + filepath.Join(dir, "r.arrow"), "makes 1000000000 jobs"},
	} {
		// 1 GiB of address space: enough for the runtime, not for the work.
		cmd := exec.Command("bash", "-c", "ulimit -v 1048576; exec "+bin+" "+c.args)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		msg := lines[len(lines)-1] // notes may come first; the error is one line
		if code != 1 || !strings.HasPrefix(msg, "dpfeat: ") || !strings.Contains(msg, c.want) || strings.Contains(string(out), "goroutine") {
			t.Errorf("%s: exit %d, %q", strings.Fields(c.args)[0], code, msg)
		}
	}
}
