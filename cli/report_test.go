package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The HTML report holds a plot per dataset, the summary with guarantees,
// every job, and the ledger; in headless Chromium (when installed: the
// setup installs Debian's chromium) every plot decodes and no script
// error is logged (#21 item 6).
func TestReportRendersInChromium(t *testing.T) {
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow")
	blobFile(t, train, 300, 5, []string{"a", "b", "c"}, "sha-1", 1)
	blobFile(t, test, 90, 5, []string{"a", "b", "c"}, "sha-1", 2)
	lt := filepath.Join(dir, "lt.arrow")
	if code, _, errs := run(t, "imbalance", "--in", train, "--ratio", "4", "--out", lt); code != 0 {
		t.Fatal(errs)
	}
	cfg := filepath.Join(dir, "s.yaml")
	os.WriteFile(cfg, []byte("datasets: [{name: \"<b>blobs</b>\", train: train.arrow, test: test.arrow}, {name: lt, train: lt.arrow, test: test.arrow}]\nmethods: {dpls: {}, dpfc: {}, ls: {}}\nepsilons: [0.5, 2]\ndelta: 1e-5\nseeds: 2\n"), 0o644)
	results := filepath.Join(dir, "r.arrow")
	if code, _, errs := run(t, "sweep", "--config", cfg, "--out", results); code != 0 {
		t.Fatal(errs)
	}
	ledgerDir := filepath.Join(dir, "ledger")
	if code, _, errs := run(t, "budget", "init", "--features", train, "--epsilon", "5", "--delta", "1e-5", "--ledger", ledgerDir); code != 0 {
		t.Fatal(errs)
	}
	page := filepath.Join(dir, "report.html")
	if code, _, errs := run(t, "report", "--results", results, "--out", page, "--features", train, "--ledger", ledgerDir); code != 0 {
		t.Fatal(errs)
	}
	b, _ := os.ReadFile(page)
	html := string(b)
	for _, want := range []string{`data-plots="2"`, "&lt;b&gt;blobs&lt;/b&gt;", "(ε = 0.5, δ = 1e-05)-DP", "not private (ε = ∞)", "Privacy budget", "budget (ε = 5, δ = 1e-05)"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(html, "<b>blobs</b>") {
		t.Error("a dataset name went into the page unescaped")
	}
	if n := strings.Count(html, `<img class="plot"`); n != 2 {
		t.Errorf("%d plots, want one per dataset (2)", n)
	}
	if code, _, errs := run(t, "report", "--results", results, "--out", page); code != 1 || !strings.Contains(errs, "exists") {
		t.Errorf("report over an existing page: exit %d, %q", code, errs)
	}
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no Chromium: the rendering check needs Debian's chromium (scripts/setup.sh installs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
		"--user-data-dir="+filepath.Join(dir, "chromium"), "--virtual-time-budget=5000", "--dump-dom", "file://"+page)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	if m := regexp.MustCompile(`data-plots-ok="(\d+)"`).FindStringSubmatch(string(dom)); m == nil || m[1] != "2" {
		t.Errorf("plots decoded in Chromium: %v, want 2", m)
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Uncaught") {
			t.Errorf("Chromium logged: %s", line)
		}
	}
}
