package encode

import (
	"bytes"
	"strings"
	"testing"
)

// On a pipe the bar writes a line at its first step, then every ten
// seconds, and a last one only where the count moved since: a job done in
// its first step says so once.
func TestProgressLinesOnAPipe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		total int64
		steps []int64
		want  []string // each line's count, in order
	}{
		{"one step", 7, []int64{7}, []string{"7/7"}},
		{"several steps within ten seconds", 7, []int64{3, 4}, []string{"3/7", "7/7"}},
		{"unknown total", -1, []int64{5}, []string{"5 images"}},
		{"nothing done", 4, nil, []string{"0/4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := newProgress(&buf, "", tc.total, 0)
			for _, n := range tc.steps {
				p.add(n)
			}
			p.finish()
			p.finish() // a second finish writes nothing
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(tc.want), buf.String())
			}
			for i, l := range lines {
				if !strings.HasPrefix(l, "extract ") || !strings.Contains(l, tc.want[i]) {
					t.Errorf("line %d = %q, want the label and %q", i, l, tc.want[i])
				}
			}
		})
	}
}
