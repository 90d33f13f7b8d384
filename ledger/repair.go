package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dpfeat/dpfeat/internal/atomicfile"
)

// ErrIntact is returned by Repair when the ledger has no damaged line.
var ErrIntact = errors.New("the ledger is intact: nothing to repair")

// ErrUnknownCost is returned by Repair when damaged lines may have
// recorded releases (anything but a torn last line) and spendAll was not
// given.
var ErrUnknownCost = errors.New("damaged lines of unknown cost")

// Repair makes a damaged ledger usable again without ever letting it
// claim less spending than happened. The ledger as it was is first kept,
// synced, in Backup (the ledger's path + ".damaged-" + the time).
//
//   - A last line cut short (no end of line) is a write that never
//     completed: dpfeat writes a release's output only after its ledger
//     line is whole and synced, so no output exists for it. It is dropped,
//     and a repair line records that.
//   - Any other damage — a whole line whose checksum does not match (edited
//     or corrupted), an unexpected entry, damage before the last line — may
//     hide a release that happened, of unknown cost. Repair refuses
//     (ErrUnknownCost) unless spendAll: then the damaged lines are dropped
//     and the repair line counts as a non-private release, so the budget is
//     spent from then on (later fits need --force) while every intact
//     release stays listed.
//   - A budget line cut short with nothing after it is an init that never
//     completed: the file is moved to Backup and the dataset has no ledger
//     (set the budget again). Any other damage to the budget line is
//     refused: the budget itself is unknown.
//
// The repaired ledger replaces the old one by an atomic rename, under the
// exclusive lock; a process waiting on the old file then reads the damaged
// copy and refuses, as before the repair.
func (l *Ledger) Repair(spendAll bool) (Repair, error) {
	f, err := os.OpenFile(l.Path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return Repair{}, fmt.Errorf("%w for %s", ErrNoLedger, l.Key)
	}
	if err != nil {
		return Repair{}, err
	}
	defer f.Close()
	if err := lockExclusive(f); err != nil {
		return Repair{}, err
	}
	defer unlock(f)
	data, err := io.ReadAll(f)
	if err != nil {
		return Repair{}, fmt.Errorf("read %s: %w", l.Path, err)
	}
	lines := splitLines(data)
	var damaged []int // from 0
	var why []string
	for i, line := range lines {
		if _, err := readEntry(i, line); err != nil {
			damaged = append(damaged, i)
			why = append(why, fmt.Sprintf("line %d: %v", i+1, err))
		}
	}
	if len(damaged) == 0 {
		return Repair{}, fmt.Errorf("%s: %w", l.Path, ErrIntact)
	}
	last := len(lines) - 1
	torn := len(damaged) == 1 && damaged[0] == last && !bytes.HasSuffix(lines[last], []byte("\n"))
	now := time.Now().UTC()
	rep := Repair{Time: now.Format(time.RFC3339Nano), Backup: l.Path + ".damaged-" + now.Format("20060102T150405.000000000Z")}
	for _, i := range damaged {
		rep.Lines = append(rep.Lines, i+1)
	}
	if damaged[0] == 0 {
		if !torn {
			return Repair{}, fmt.Errorf("%s: %s — the budget line itself is damaged, so the budget is unknown; restore the file from a backup", l.Path, strings.Join(why, "; "))
		}
		// An init that never completed: nothing can have been spent.
		if err := atomicfile.WriteBytes(rep.Backup, data); err != nil {
			return Repair{}, err
		}
		if err := os.Remove(l.Path); err != nil {
			return Repair{}, fmt.Errorf("remove %s: %w", l.Path, err)
		}
		rep.Reason = "the budget line was cut short (an init that never completed): the ledger was removed; set the budget again with dpfeat budget init"
		return rep, syncDir(filepath.Dir(l.Path))
	}
	switch {
	case torn:
		rep.Reason = "the last line was cut short: a write that never completed, whose output was never written"
	case !spendAll:
		return Repair{}, fmt.Errorf("%s: %s: %w — they may have recorded releases, so the only safe repair counts the budget as spent: dpfeat budget repair --spend-all keeps the intact releases, moves the damaged lines to a backup and records that (later fits need --force)", l.Path, strings.Join(why, "; "), ErrUnknownCost)
	default:
		rep.SpendAll = true
		rep.Reason = "damaged lines of unknown cost (" + strings.Join(why, "; ") + "): the budget counts as spent"
	}
	if err := atomicfile.WriteBytes(rep.Backup, data); err != nil {
		return Repair{}, err
	}
	var out bytes.Buffer
	next := 0
	for i, line := range lines {
		if next < len(damaged) && damaged[next] == i {
			next++
			continue
		}
		out.Write(line)
	}
	line, err := encodeLine(entry{Kind: "repair", Repair: &rep})
	if err != nil {
		return Repair{}, err
	}
	out.Write(line)
	if err := atomicfile.WriteBytes(l.Path, out.Bytes()); err != nil {
		return Repair{}, err
	}
	return rep, nil
}
