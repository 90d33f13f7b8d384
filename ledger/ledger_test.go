package ledger

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
)

// gaussian is a release of k Gaussian queries of multiplier z.
func gaussian(method string, z float64, k int) Release {
	m := accounting.Mechanism{Name: method, Kind: accounting.KindGaussian, Sensitivity: 1, NoiseStd: z, Count: k}
	return Release{Method: method, Guarantee: accounting.Guarantee{Mechanisms: []accounting.Mechanism{m}}, Output: method + ".out", Version: "test"}
}

func newLedger(t *testing.T, eps, delta float64) *Ledger {
	t.Helper()
	l := At(t.TempDir(), "name:test")
	if err := l.Init(eps, delta, "data.arrow"); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSpendComposesAndRefusesOverspend: releases compose exactly as the
// accountant composes their mechanisms together; the release that would
// pass the budget is refused and not recorded; --force records it.
func TestSpendComposesAndRefusesOverspend(t *testing.T) {
	l := newLedger(t, 2, 1e-5)
	var all []accounting.Mechanism
	n := 0
	for {
		r := gaussian(fmt.Sprintf("fit%d", n), 3, 1)
		g, err := l.Spend(r)
		if errors.Is(err, ErrOverspend) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, r.Guarantee.Mechanisms...)
		want, _ := accounting.Account(all, 1e-5, accounting.AccountantAuto, accounting.Options{})
		if g.Epsilon != want.Epsilon || g.Accountant != accounting.AccountantGDP {
			t.Fatalf("after %d releases: %v (%s), accountant alone %v", n+1, g.Epsilon, g.Accountant, want.Epsilon)
		}
		n++
	}
	// μ = √n/3 ≤ μ(ε = 2, δ = 1e-5): the exact count from GDP.
	muMax := 0.0
	for mu := 0.01; ; mu += 0.001 {
		if e, _ := accounting.GaussianEpsilon(mu, 1e-5); e > 2 {
			break
		}
		muMax = mu
	}
	if want := int(math.Floor(9 * muMax * muMax)); n < want-1 || n > want {
		t.Errorf("%d releases fit in ε = 2; GDP allows about %d", n, want)
	}
	b, rel, err := l.Read()
	if err != nil || len(rel) != n || b.Epsilon != 2 {
		t.Fatalf("read: %d releases, %v", len(rel), err)
	}
	forced := gaussian("forced", 3, 1)
	forced.Forced = true
	if g, err := l.Spend(forced); err != nil || float64(g.Epsilon) <= 2 {
		t.Errorf("forced release: %v, %v", g.Epsilon, err)
	}
	if _, rel, _ := l.Read(); len(rel) != n+1 || !rel[n].Forced {
		t.Errorf("the forced release is not recorded as forced")
	}
	if err := l.Init(5, 1e-5, ""); err == nil || !strings.Contains(err.Error(), "already set") {
		t.Errorf("a second init: %v", err)
	}
	if _, err := At(t.TempDir(), "name:none").Spend(gaussian("x", 1, 1)); !errors.Is(err, ErrNoLedger) {
		t.Errorf("spending without a ledger: %v", err)
	}
}

// TestConcurrentSpendersNeverOverspend: 24 goroutines, each with its own
// open of the ledger, race for a budget that holds exactly k releases.
func TestConcurrentSpendersNeverOverspend(t *testing.T) {
	l := newLedger(t, 1, 1e-5)
	var wg sync.WaitGroup
	ok := make(chan bool, 24)
	for i := 0; i < 24; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := At(filepath.Dir(l.Path), l.Key).Spend(gaussian(fmt.Sprint(i), 10, 1))
			if err != nil && !errors.Is(err, ErrOverspend) {
				t.Error(err)
			}
			ok <- err == nil
		}(i)
	}
	wg.Wait()
	close(ok)
	granted := 0
	for g := range ok {
		if g {
			granted++
		}
	}
	b, rel, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	g, _ := Spent(b, rel)
	if len(rel) != granted || float64(g.Epsilon) > 1 || granted == 0 || granted == 24 {
		t.Errorf("%d granted, %d recorded, ε = %v", granted, len(rel), g.Epsilon)
	}
	// One more would pass the budget.
	if _, err := l.Spend(gaussian("late", 10, 1)); !errors.Is(err, ErrOverspend) {
		t.Errorf("after the race the ledger still had room: %v", err)
	}
}

// TestConcurrentProcessesNeverOverspend re-runs this test binary as 6
// processes that each try to spend 3 releases on one ledger.
func TestConcurrentProcessesNeverOverspend(t *testing.T) {
	if os.Getenv("DPFEAT_LEDGER_CHILD") != "" {
		dir, key := os.Getenv("DPFEAT_LEDGER_CHILD"), "name:test"
		for i := 0; i < 3; i++ {
			_, err := At(dir, key).Spend(gaussian("child", 10, 1))
			if err != nil && !errors.Is(err, ErrOverspend) {
				fmt.Println("error:", err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	l := newLedger(t, 1, 1e-5)
	var cmds []*exec.Cmd
	for i := 0; i < 6; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentProcessesNeverOverspend$")
		cmd.Env = append(os.Environ(), "DPFEAT_LEDGER_CHILD="+filepath.Dir(l.Path))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	b, rel, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	g, _ := Spent(b, rel)
	if float64(g.Epsilon) > 1 || len(rel) == 0 || len(rel) == 18 {
		t.Errorf("%d releases from 6 processes compose to ε = %v over a budget of 1", len(rel), g.Epsilon)
	}
	if _, err := l.Spend(gaussian("late", 10, 1)); !errors.Is(err, ErrOverspend) {
		t.Errorf("the processes left room: %v", err)
	}
}

// TestTornLineIsDetected: a line cut short, or altered, is reported with
// its line number and blocks spending; it is never skipped.
func TestTornLineIsDetected(t *testing.T) {
	for _, damage := range []string{"cut", "edit"} {
		l := newLedger(t, 5, 1e-5)
		for i := 0; i < 3; i++ {
			if _, err := l.Spend(gaussian(strconv.Itoa(i), 5, 1)); err != nil {
				t.Fatal(err)
			}
		}
		data, _ := os.ReadFile(l.Path)
		if damage == "cut" {
			data = data[:len(data)-15]
		} else {
			data = []byte(strings.Replace(string(data), `"method":"1"`, `"method":"9"`, 1))
		}
		os.WriteFile(l.Path, data, 0o644)
		_, _, err := l.Read()
		want := map[string]string{"cut": "line 4: cut short", "edit": "line 3: checksum mismatch"}[damage]
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: read %v; want %q", damage, err, want)
		}
		if _, err := l.Spend(gaussian("next", 5, 1)); err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Errorf("%s: spending from a damaged ledger: %v", damage, err)
		}
	}
}

func TestKeys(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("abc"), 0o644)
	k, err := FileKey(p)
	if err != nil || k != "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("FileKey = %q, %v", k, err)
	}
	for _, bad := range []string{"", "a/b", "..", strings.Repeat("x", 300)} {
		if _, err := NameKey(bad); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	if filepath.Base(At("d", "sha256:ab").Path) != "sha256-ab.ledger" {
		t.Errorf("path %q", At("d", "sha256:ab").Path)
	}
}

// TestFullDiskLeavesNoTornLine (#16 item 11): a write that fails part-way
// (a full disk: half the line written, then ENOSPC) is taken back by the
// writer under its lock; the ledger stays readable and the next release is
// recorded as if the failed one had never been tried.
func TestFullDiskLeavesNoTornLine(t *testing.T) {
	l := newLedger(t, 10, 1e-5)
	if _, err := l.Spend(gaussian("first", 3, 1)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(l.Path)
	orig := writeAt
	writeAt = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/2])
		return n, errors.New("no space left on device")
	}
	_, err := l.Spend(gaussian("second", 3, 1))
	writeAt = orig
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("a failed write: %v", err)
	}
	if after, _ := os.ReadFile(l.Path); string(after) != string(before) {
		t.Fatalf("the ledger changed after a failed write:\n%q\n%q", before, after)
	}
	if _, rel, err := l.Read(); err != nil || len(rel) != 1 {
		t.Fatalf("after the failure: %d releases, %v", len(rel), err)
	}
	if _, err := l.Spend(gaussian("third", 3, 1)); err != nil {
		t.Fatalf("the next release: %v", err)
	}
}

// TestNonPrivatePolicy: the one rule for non-private releases on budgeted
// data — refused unless forced, in Spend and in Fits alike.
func TestNonPrivatePolicy(t *testing.T) {
	l := newLedger(t, 5, 1e-5)
	ref := Release{Method: "ls", Guarantee: accounting.NonPrivate("reference")}
	if _, err := l.Spend(ref); !errors.Is(err, ErrNonPrivate) {
		t.Errorf("Spend: %v", err)
	}
	if _, err := l.Fits([]Release{gaussian("a", 3, 1), ref}); !errors.Is(err, ErrNonPrivate) {
		t.Errorf("Fits: %v", err)
	}
	ref.Forced = true
	if g, err := l.Spend(ref); err != nil || !math.IsInf(float64(g.Epsilon), 1) {
		t.Errorf("forced: %v %v", g.Epsilon, err)
	}
}
