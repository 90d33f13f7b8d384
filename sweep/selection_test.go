package sweep

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrivateSelectionSweep runs private selections end to end: each row
// is one selection whose reported ε includes the tuning and meets the
// target.
func TestPrivateSelectionSweep(t *testing.T) {
	cfgPath, dir := tinySweep(t, "selection: {mode: private, distribution: geometric, mean: 3}\n")
	cfg, err := LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Run(context.Background(), cfg, RunOptions{Out: filepath.Join(dir, "r.arrow"), Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Per dataset: 3 private methods × 2 ε × 2 seeds selections + ls × 2.
	if len(rows) != 2*(3*2*2+2) {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if !r.Private {
			continue
		}
		if r.Error != "" || !strings.HasPrefix(r.Tuning, "private selection") || r.EpsilonSpent == nil || *r.EpsilonSpent > r.Epsilon || r.TestAccuracy == nil {
			t.Fatalf("selection row %+v", r)
		}
		// Only what Papernot & Steinke's theorem covers is released: not
		// the number of runs K, nor a time that grows with it (#36 item 6).
		if strings.Contains(r.Tuning, "run(s)") || r.Seconds != 0 {
			t.Errorf("a selection row releases K: tuning %q, %v s", r.Tuning, r.Seconds)
		}
		if r.Method == "dpfc" && r.Setting != "lr=4 steps=3" && r.Setting != "lr=8 steps=3" {
			t.Errorf("dpfc chose %q", r.Setting)
		}
	}
	for _, s := range Summarize(rows) {
		if s.Private && !strings.HasPrefix(s.Setting, "private selection") {
			t.Errorf("summary of a private selection: %+v", s)
		}
	}
}
