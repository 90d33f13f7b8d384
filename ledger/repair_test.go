package ledger

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
)

// TestRepair: a torn last line is dropped; damage that may hide a release
// is refused unless spendAll, which then counts the budget as spent; the
// ledger as it was is always kept first, and a refused repair changes
// nothing.
func TestRepair(t *testing.T) {
	cases := []struct {
		name     string
		damage   func([]byte) []byte
		spendAll bool
		wantErr  error // nil: repaired

		keep     int  // intact releases after the repair
		spentAll bool // the repaired ledger counts the budget as spent
		lines    []int
	}{
		{name: "intact", damage: func(b []byte) []byte { return b }, wantErr: ErrIntact},
		{name: "torn last line", damage: func(b []byte) []byte { return b[:len(b)-15] }, keep: 2, lines: []int{4}},
		{name: "torn last line, spend-all not needed", damage: func(b []byte) []byte { return b[:len(b)-15] }, spendAll: true, keep: 2, lines: []int{4}},
		{name: "edited line", damage: edit(`"method":"1"`, `"method":"9"`), wantErr: ErrUnknownCost},
		{name: "edited line, spend-all", damage: edit(`"method":"1"`, `"method":"9"`), spendAll: true, keep: 2, spentAll: true, lines: []int{3}},
		{name: "whole last line with a bad checksum", damage: edit(`"method":"2"`, `"method":"7"`), wantErr: ErrUnknownCost},
		{name: "torn and edited", damage: func(b []byte) []byte { return edit(`"method":"0"`, `"method":"8"`)(b[:len(b)-15]) }, spendAll: true, keep: 1, spentAll: true, lines: []int{2, 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLedger(t, 5, 1e-5)
			for i := 0; i < 3; i++ {
				if _, err := l.Spend(gaussian(strconv.Itoa(i), 5, 1)); err != nil {
					t.Fatal(err)
				}
			}
			orig, _ := os.ReadFile(l.Path)
			damaged := tc.damage(orig)
			if err := os.WriteFile(l.Path, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := l.Repair(tc.spendAll)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("repair: %v; want %v", err, tc.wantErr)
				}
				if now, _ := os.ReadFile(l.Path); !bytes.Equal(now, damaged) {
					t.Errorf("a refused repair changed the ledger")
				}
				if m, _ := filepath.Glob(l.Path + ".damaged-*"); len(m) != 0 {
					t.Errorf("a refused repair wrote %v", m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if kept, _ := os.ReadFile(r.Backup); !bytes.Equal(kept, damaged) {
				t.Errorf("the backup %s is not the ledger as it was", r.Backup)
			}
			if r.SpendAll != tc.spentAll || !slices.Equal(r.Lines, tc.lines) {
				t.Errorf("repair %+v; want spend-all %v, lines %v", r, tc.spentAll, tc.lines)
			}
			b, rel, g, err := l.Status()
			if err != nil {
				t.Fatalf("the repaired ledger: %v", err)
			}
			if len(b.Repairs) != 1 || b.Repairs[0].Backup != r.Backup {
				t.Errorf("repairs read back: %+v", b.Repairs)
			}
			intact := 0
			var mechs []accounting.Mechanism
			for _, x := range rel {
				if !strings.HasPrefix(x.Method, "budget repair") {
					intact++
					mechs = append(mechs, x.Guarantee.Mechanisms...)
				}
			}
			if intact != tc.keep {
				t.Errorf("%d intact releases kept; want %d", intact, tc.keep)
			}
			if tc.spentAll {
				if !math.IsInf(float64(g.Epsilon), 1) {
					t.Errorf("spend-all repair: spent ε = %v; want everything", g.Epsilon)
				}
				if _, err := l.Spend(gaussian("next", 5, 1)); !errors.Is(err, ErrOverspend) {
					t.Errorf("spending after a spend-all repair: %v", err)
				}
				forced := gaussian("forced", 5, 1)
				forced.Forced = true
				if _, err := l.Spend(forced); err != nil {
					t.Errorf("a forced release after a spend-all repair: %v", err)
				}
			} else {
				want, _ := accounting.Account(mechs, 1e-5, accounting.AccountantAuto, accounting.Options{})
				if g.Epsilon != want.Epsilon {
					t.Errorf("spent ε = %v; the intact releases compose to %v", g.Epsilon, want.Epsilon)
				}
				if _, err := l.Spend(gaussian("next", 5, 1)); err != nil {
					t.Errorf("spending after the repair: %v", err)
				}
			}
			if _, err := l.Repair(false); !errors.Is(err, ErrIntact) {
				t.Errorf("a second repair: %v", err)
			}
		})
	}
}

// TestRepairBudgetLine: an init cut short is removed (the budget can be
// set again); an edited budget line is refused — the budget is unknown.
func TestRepairBudgetLine(t *testing.T) {
	l := newLedger(t, 5, 1e-5)
	orig, _ := os.ReadFile(l.Path)
	os.WriteFile(l.Path, orig[:len(orig)-4], 0o644)
	r, err := l.Repair(false)
	if err != nil {
		t.Fatal(err)
	}
	if l.Exists() || !strings.Contains(r.Reason, "budget init") {
		t.Errorf("an init cut short: exists %v, %q", l.Exists(), r.Reason)
	}
	if err := l.Init(3, 1e-5, ""); err != nil {
		t.Errorf("init after the repair: %v", err)
	}
	if _, err := l.Spend(gaussian("a", 5, 1)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(l.Path)
	os.WriteFile(l.Path, bytes.Replace(data, []byte(`"epsilon":3`), []byte(`"epsilon":9`), 1), 0o644)
	if _, err := l.Repair(true); err == nil || !strings.Contains(err.Error(), "budget line itself") {
		t.Errorf("an edited budget line: %v", err)
	}
}

func edit(old, new string) func([]byte) []byte {
	return func(b []byte) []byte { return bytes.Replace(b, []byte(old), []byte(new), 1) }
}
