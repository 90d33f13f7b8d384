package main

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"a","Test":"TestX"}`,
		`{"Action":"output","Package":"a","Test":"TestX","Output":"x_test.go:3: boom\n"}`,
		`{"Action":"fail","Package":"a","Test":"TestX","Elapsed":0.1}`,
		`{"Action":"pass","Package":"a","Test":"TestY","Elapsed":0.1}`,
		`{"Action":"pass","Package":"a","Test":"TestY/sub","Elapsed":0.1}`,
		`{"Action":"fail","Package":"a","Elapsed":0.3}`,
		`{"Action":"skip","Package":"b","Test":"TestZ"}`,
		`{"Action":"pass","Package":"b","Elapsed":0.2}`,
		`{"Action":"skip","Package":"c"}`,
		`# a build error`,
	}, "\n")
	var out strings.Builder
	if code := run(strings.NewReader(in), &out); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{
		"FAIL a 0.3s (1 passed, 1 failed, 0 skipped)",
		"ok   b 0.2s (0 passed, 0 failed, 1 skipped)",
		"--   c (no tests)",
		"--- a TestX\nx_test.go:3: boom",
		"# a build error",
		"1 passed, 1 failed, 1 skipped (3 packages, 1 failed)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
