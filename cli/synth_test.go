package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSynthCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "s")
	if code, stdout, errs := run(t, "synth", "--size", "8x6", "--channels", "1", "--count", "5", "--out", out, "--json"); code != 0 || !strings.Contains(stdout, `"images": 5`) {
		t.Fatalf("exit %d: %s %s", code, stdout, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "spectrum", "00000001.png")); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--size", "8", "--out", filepath.Join(dir, "a")}, "--size"},
		// Named in the order given (#35 item 15: it once said 8×0).
		{[]string{"--size", "0x8", "--out", filepath.Join(dir, "d")}, "size 0×8 (height×width"},
		{[]string{"--process", "clouds", "--out", filepath.Join(dir, "b")}, `unknown process "clouds"`},
		{[]string{"--channels", "2", "--out", filepath.Join(dir, "c")}, "2 channels"},
		{[]string{"--count", "5", "--size", "8x6", "--channels", "1", "--out", out}, "not empty"},
	} {
		if code, _, errs := run(t, append([]string{"synth"}, c.args...)...); code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, code, errs)
		}
	}
}
