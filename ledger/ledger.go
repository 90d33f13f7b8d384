// Package ledger keeps a privacy budget per private dataset: an
// append-only log of every release made from it, composed by the
// accountant, so that a user cannot spend more than the budget they set.
//
// A ledger is one file per dataset (keyed by the feature file's content
// hash, or a name the user gives) in a ledger folder. Its first line sets
// the budget (ε, δ); every later line is a release: the method, its full
// guarantee (the mechanisms the accountant composes), the time, the output
// file, the dpfeat version, and whether the user forced it past the budget.
// Each line carries a CRC-32 of its JSON, and a line is written whole and
// synced before the output it accounts for is written; a line cut short
// or damaged is reported, never skipped. Spending holds an exclusive lock
// on the file (flock) from reading to appending, so two fits — goroutines
// or processes — cannot both spend the last of a budget. Repair makes a
// damaged ledger usable again without ever counting less than was spent.
//
// Releases on one ledger are the same dataset, so they compose
// sequentially; parallel composition is only ever within one release (a
// mechanism's own Parallel count). The composition uses the tightest
// accountant that applies to all releases together (accounting.Account
// with AccountantAuto: exact GDP for full-batch Gaussian releases, RDP
// where something is Poisson-sampled, zCDP where pure ε-DP mechanisms mix
// in) and says which.
package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/internal/filehash"
)

// Budget is what a ledger allows.
type Budget struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Key names the dataset: "sha256:…" of a feature file, or a name.
	Key string `json:"key"`
	// Data is the file the budget was set for (informational).
	Data    string `json:"data,omitempty"`
	Created string `json:"created"`
	// Repairs are the ledger's repair lines (filled on reading; never part
	// of the budget line itself).
	Repairs []Repair `json:"repairs,omitempty"`
}

// Repair records one `dpfeat budget repair` of a damaged ledger.
type Repair struct {
	Time string `json:"time"`
	// Lines are the damaged lines' numbers in the ledger as it was.
	Lines []int `json:"lines"`
	// Backup is the copy of the ledger as it was, damaged lines included.
	Backup string `json:"backup"`
	// SpendAll: the damaged lines recorded releases of unknown cost, so
	// the budget counts as spent from then on, as after a non-private
	// release (later fits need --force).
	SpendAll bool   `json:"spend_all,omitempty"`
	Reason   string `json:"reason"`
}

// Release is one spending of the budget.
type Release struct {
	Method    string               `json:"method"`
	Guarantee accounting.Guarantee `json:"guarantee"`
	Time      string               `json:"time"`
	Output    string               `json:"output"`
	Version   string               `json:"version"`
	// Forced, asked of Spend, allows the release past the budget
	// (--overspend); recorded, it says the release went past it — only
	// then, so that a release within the budget is never tagged.
	Forced bool `json:"forced,omitempty"`
	// Settles, when > 0, is the number (from 1) of the release this entry
	// replaces: the exact guarantee of a release charged first as a plan
	// (accounting.Release.Prior), written after part of its noise was
	// drawn. A reader that does not know it counts both, which only
	// overstates what was spent.
	Settles int `json:"settles,omitempty"`
}

type entry struct {
	Kind    string   `json:"kind"` // "budget", "release" or "repair"
	Budget  *Budget  `json:"budget,omitempty"`
	Release *Release `json:"release,omitempty"`
	Repair  *Repair  `json:"repair,omitempty"`
}

// check says what is wrong with entry e on line i (from 0), if anything.
func (e entry) check(i int) error {
	switch {
	case i == 0 && e.Kind == "budget" && e.Budget != nil && len(e.Budget.Repairs) == 0:
	case i > 0 && e.Kind == "release" && e.Release != nil:
	case i > 0 && e.Kind == "repair" && e.Repair != nil:
	default:
		return fmt.Errorf("unexpected %q entry", e.Kind)
	}
	return nil
}

// spendAll is how a repair that gave up on damaged lines of unknown cost
// shows among the releases: non-private, so it spends everything.
func (r Repair) spendAll() Release {
	return Release{Method: fmt.Sprintf("budget repair: damaged lines %v of unknown cost (spends everything)", r.Lines),
		Guarantee: accounting.Guarantee{Epsilon: accounting.Float(math.Inf(1)), Accountant: accounting.AccountantNone}, Time: r.Time, Output: r.Backup, Forced: true}
}

// ErrOverspend is returned when a release would take the composed
// guarantee past the budget.
// ErrNonPrivate refuses a non-private release on budgeted data unless it
// is forced: it spends the whole budget (the policy of every command).
var ErrNonPrivate = errors.New("a non-private release would spend all of the data's budget (--overspend records that)")

var ErrOverspend = errors.New("the release would exceed the privacy budget")

// ErrNoLedger is returned when a dataset has no ledger.
var ErrNoLedger = errors.New("no budget ledger")

// DefaultDir is where ledgers live unless the user says: $DPFEAT_LEDGER,
// else $XDG_DATA_HOME/dpfeat/ledger, else ~/.local/share/dpfeat/ledger.
func DefaultDir() string {
	if d := os.Getenv("DPFEAT_LEDGER"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "dpfeat", "ledger")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "dpfeat", "ledger")
	}
	return filepath.Join(os.TempDir(), "dpfeat-ledger")
}

// FileKey is the key of a feature file: the SHA-256 of its content, so a
// copy or a rename shares the ledger and a changed file does not.
func FileKey(path string) (string, error) {
	sum, err := filehash.SHA256(path)
	if err != nil {
		return "", err
	}
	return "sha256:" + sum, nil
}

// NameKey is the key of a ledger the user names.
func NameKey(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, "/\\\x00") || name == "." || name == ".." || len(name) > 200 {
		return "", fmt.Errorf("ledger name %q: use letters, digits, dots, dashes (no slashes)", name)
	}
	return "name:" + name, nil
}

// Ledger is one dataset's ledger file.
type Ledger struct {
	Path string
	Key  string
}

// At returns the ledger of key in dir (it may not exist yet).
func At(dir, key string) *Ledger {
	file := strings.NewReplacer(":", "-").Replace(key) + ".ledger"
	return &Ledger{Path: filepath.Join(dir, file), Key: key}
}

// Exists reports whether the ledger file exists.
func (l *Ledger) Exists() bool {
	_, err := os.Stat(l.Path)
	return err == nil
}

// Init creates the ledger with its budget; an existing ledger is never
// replaced.
func (l *Ledger) Init(eps, delta float64, data string) error {
	if !(eps > 0) || eps > 1e6 || !(delta >= 0 && delta < 1) {
		return fmt.Errorf("a budget needs ε > 0 and δ in [0, 1), got ε = %v, δ = %v", eps, delta)
	}
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o777); err != nil {
		return err
	}
	f, err := os.OpenFile(l.Path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666) // less the umask
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s: a budget is already set for %s (ledgers are append-only; see dpfeat budget show)", l.Path, l.Key)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	line, err := encodeLine(entry{Kind: "budget", Budget: &Budget{Epsilon: eps, Delta: delta, Key: l.Key, Data: data,
		Created: time.Now().UTC().Format(time.RFC3339)}})
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(l.Path))
}

// Read returns the budget and releases (under a shared lock).
func (l *Ledger) Read() (Budget, []Release, error) {
	f, err := os.Open(l.Path)
	if errors.Is(err, os.ErrNotExist) {
		return Budget{}, nil, fmt.Errorf("%w for %s (set one with dpfeat budget init)", ErrNoLedger, l.Key)
	}
	if err != nil {
		return Budget{}, nil, err
	}
	defer f.Close()
	if err := lockShared(f); err != nil {
		return Budget{}, nil, err
	}
	defer unlock(f)
	return l.parse(f)
}

func (l *Ledger) parse(r io.Reader) (Budget, []Release, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Budget{}, nil, err
	}
	var b Budget
	var rel []Release
	for i, line := range splitLines(data) {
		e, err := readEntry(i, line)
		if err != nil {
			return Budget{}, nil, fmt.Errorf("%s: line %d: %v — the ledger is damaged (a torn or edited write); dpfeat will not spend from it until it is repaired (dpfeat budget repair)", l.Path, i+1, err)
		}
		switch e.Kind {
		case "budget":
			b = *e.Budget
		case "release":
			if k := e.Release.Settles; k > 0 && k <= len(rel) {
				rel[k-1] = *e.Release
			} else {
				rel = append(rel, *e.Release)
			}
		case "repair":
			b.Repairs = append(b.Repairs, *e.Repair)
			if e.Repair.SpendAll {
				rel = append(rel, e.Repair.spendAll())
			}
		}
	}
	if b.Key == "" {
		return Budget{}, nil, fmt.Errorf("%s: no budget line", l.Path)
	}
	if b.Key != l.Key {
		return Budget{}, nil, fmt.Errorf("%s: the ledger is for %s, not %s", l.Path, b.Key, l.Key)
	}
	return b, rel, nil
}

// Status reads the ledger and composes its releases.
func (l *Ledger) Status() (Budget, []Release, accounting.Guarantee, error) {
	b, rel, err := l.Read()
	if err != nil {
		return Budget{}, nil, accounting.Guarantee{}, err
	}
	g, err := Spent(b, rel)
	return b, rel, g, err
}

// Spent composes releases with the tightest accountant that applies, at
// the budget's δ.
func Spent(b Budget, releases []Release) (accounting.Guarantee, error) {
	var mechs []accounting.Mechanism
	for _, r := range releases {
		if r.Guarantee.Accountant == accounting.AccountantNone {
			// A non-private release (forced) spends everything.
			return accounting.Guarantee{Epsilon: accounting.Float(math.Inf(1)), Delta: b.Delta, Accountant: accounting.AccountantNone}, nil
		}
		mechs = append(mechs, r.Guarantee.Mechanisms...)
	}
	if len(mechs) == 0 {
		return accounting.Guarantee{Delta: b.Delta, Accountant: accounting.AccountantNone}, nil
	}
	return accounting.Account(mechs, b.Delta, accounting.AccountantAuto, accounting.Options{})
}

// Left returns the largest ε, at the budget's δ, that one more Gaussian
// release can take and leave the ledger within its budget, composed with
// the releases recorded by the same accountant as Spent (#37 item 4).
// It is not the budget less what is spent: Gaussian releases compose
// sub-additively in ε (three of ε = 1 compose to about 1.97), so that
// difference understates what is left. The release's μ is found by
// bisection to 10⁻⁹ relative (rounded down), and its ε from μ at δ.
func Left(b Budget, releases []Release) (float64, error) {
	spent, err := Spent(b, releases)
	if err != nil {
		return 0, err
	}
	if float64(spent.Epsilon) >= b.Epsilon || b.Delta <= 0 {
		return 0, nil
	}
	fits := func(mu float64) (bool, error) {
		g, err := Spent(b, append(slices.Clone(releases), Release{Guarantee: accounting.Guarantee{
			Mechanisms: []accounting.Mechanism{{Name: "one more release", Kind: accounting.KindGaussian, Sensitivity: 1, NoiseStd: 1 / mu, Count: 1}}}}))
		return err == nil && float64(g.Epsilon) <= b.Epsilon, err
	}
	lo, hi := 0.0, 1.0
	for {
		ok, err := fits(hi)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		lo, hi = hi, 2*hi
		if hi > 1e6 {
			return 0, fmt.Errorf("the budget ε = %g leaves no bound on one more release", b.Epsilon)
		}
	}
	for hi-lo > 1e-9*hi {
		mid := (lo + hi) / 2
		ok, err := fits(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return 0, nil
	}
	return accounting.GaussianEpsilon(lo, b.Delta)
}

// refuseNonPrivate is the policy for a non-private release on budgeted
// data: refused unless forced (ErrNonPrivate).
func (l *Ledger) refuseNonPrivate(r Release) error {
	if r.Guarantee.Accountant == accounting.AccountantNone && !r.Forced {
		return fmt.Errorf("%w: %s on %s", ErrNonPrivate, r.Method, l.Key)
	}
	return nil
}

// Fits reports whether the releases so far and rs together stay within
// the budget, without recording anything: it returns the composed
// guarantee, and ErrOverspend when it exceeds the budget. A sweep checks
// its whole cost with it before running any job.
func (l *Ledger) Fits(rs []Release) (accounting.Guarantee, error) {
	for _, r := range rs {
		if err := l.refuseNonPrivate(r); err != nil {
			return accounting.Guarantee{}, err
		}
	}
	b, rel, err := l.Read()
	if err != nil {
		return accounting.Guarantee{}, err
	}
	g, err := Spent(b, append(rel, rs...))
	if err != nil {
		return accounting.Guarantee{}, err
	}
	if float64(g.Epsilon) > b.Epsilon {
		return g, fmt.Errorf("%w of %s: these %d releases with the %d already recorded compose to ε = %s at δ = %g (%s), the budget is ε = %g",
			ErrOverspend, l.Key, len(rs), len(rel), accounting.FormatUp(float64(g.Epsilon)), b.Delta, g.Accountant, b.Epsilon)
	}
	return g, nil
}

// Spend checks that the releases so far and r together stay within the
// budget and, if so (or if r.Forced), appends r, synced — all under an
// exclusive lock. It returns the composed guarantee with r. A release
// that would exceed the budget returns ErrOverspend and writes nothing.
func (l *Ledger) Spend(r Release) (accounting.Guarantee, error) {
	g, _, err := l.record(r, 0)
	return g, err
}

// record appends r as a new release (settles 0) or in place of release
// number settles, which is never refused: its noise is out. It returns
// the composed guarantee and r's number.
func (l *Ledger) record(r Release, settles int) (accounting.Guarantee, int, error) {
	fail := func(err error) (accounting.Guarantee, int, error) { return accounting.Guarantee{}, 0, err }
	if settles == 0 {
		if err := l.refuseNonPrivate(r); err != nil {
			return fail(err)
		}
	}
	if len(r.Guarantee.Mechanisms) == 0 && r.Guarantee.Accountant != accounting.AccountantNone {
		return fail(fmt.Errorf("release of %s lists no mechanisms: nothing to account", r.Method))
	}
	f, err := os.OpenFile(l.Path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, os.ErrNotExist) {
		return fail(fmt.Errorf("%w for %s (set one with dpfeat budget init)", ErrNoLedger, l.Key))
	}
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	if err := lockExclusive(f); err != nil {
		return fail(err)
	}
	defer unlock(f)
	b, rel, err := l.parse(bufio.NewReader(f))
	if err != nil {
		return fail(err)
	}
	number := len(rel) + 1
	all := append(rel, r)
	if settles > 0 {
		if settles > len(rel) {
			return fail(fmt.Errorf("%s: release %d to settle is not in the ledger", l.Path, settles))
		}
		number, r.Settles = settles, settles
		all = slices.Clone(rel)
		all[settles-1] = r
	}
	g, err := Spent(b, all)
	if err != nil {
		return fail(err)
	}
	over := float64(g.Epsilon) > b.Epsilon
	if over && !r.Forced && settles == 0 {
		return g, 0, fmt.Errorf("%w of %s: with it the releases compose to ε = %s at δ = %g (%s), the budget is ε = %g (--overspend spends past it, recorded as such)",
			ErrOverspend, l.Key, accounting.FormatUp(float64(g.Epsilon)), b.Delta, g.Accountant, b.Epsilon)
	}
	r.Forced = over // what the record says: it went past the budget
	if r.Time == "" {
		r.Time = time.Now().UTC().Format(time.RFC3339Nano)
	}
	line, err := encodeLine(entry{Kind: "release", Release: &r})
	if err != nil {
		return fail(err)
	}
	if err := appendLine(f, line); err != nil {
		return fail(fmt.Errorf("write %s: %w", l.Path, err))
	}
	return g, number, nil
}

// Charger charges one release to a ledger (an accounting.Charger): Charge
// appends it, refused past the budget unless Release.Forced; Settle
// records its exact guarantee in place of what Charge recorded. Total is
// the composed guarantee after the last of them.
type Charger struct {
	L *Ledger
	// Release is the record's method, output, version and Forced; the
	// guarantee is the one charged.
	Release Release
	Total   accounting.Guarantee
	// Err is the last error of Charge or Settle (a refusal: ErrOverspend).
	Err    error
	number int
}

// Charge records g (accounting.Charger).
func (c *Charger) Charge(g accounting.Guarantee) error {
	if c.number != 0 {
		return c.Settle(g)
	}
	r := c.Release
	r.Guarantee = g
	total, number, err := c.L.record(r, 0)
	if c.Err = err; err != nil {
		return err
	}
	c.Total, c.number = total, number
	return nil
}

// Settle records g in place of the charged release (accounting.Charger).
func (c *Charger) Settle(g accounting.Guarantee) error {
	if c.number == 0 {
		return c.Charge(g)
	}
	r := c.Release
	r.Guarantee = g
	total, _, err := c.L.record(r, c.number)
	if c.Err = err; err != nil {
		return err
	}
	c.Total = total
	return nil
}

// Charged reports whether Charge has recorded the release.
func (c *Charger) Charged() bool { return c.number != 0 }

// splitLines splits a ledger into its lines, each with its newline (the
// last one may lack it: a torn write).
func splitLines(data []byte) [][]byte {
	var lines [][]byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) > 0 {
			lines = append(lines, line)
		}
	}
	return lines
}

// readEntry decodes line i (from 0) and checks that its entry may stand
// there.
func readEntry(i int, line []byte) (entry, error) {
	e, err := decodeLine(line)
	if err == nil {
		err = e.check(i)
	}
	return e, err
}

// A line is the entry's JSON, a tab, its CRC-32 (IEEE) in hex, a newline.
func encodeLine(e entry) ([]byte, error) {
	j, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(j, "\t%08x\n", crc32.ChecksumIEEE(j)), nil
}

func decodeLine(line []byte) (entry, error) {
	if !bytes.HasSuffix(line, []byte("\n")) {
		return entry{}, errors.New("cut short (no end of line)")
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	tab := bytes.LastIndexByte(line, '\t')
	if tab < 0 || len(line)-tab-1 != 8 {
		return entry{}, errors.New("no checksum")
	}
	var sum uint32
	if _, err := fmt.Sscanf(string(line[tab+1:]), "%08x", &sum); err != nil || sum != crc32.ChecksumIEEE(line[:tab]) {
		return entry{}, errors.New("checksum mismatch")
	}
	var e entry
	if err := json.Unmarshal(line[:tab], &e); err != nil {
		return entry{}, err
	}
	return e, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// appendLine appends a line and syncs it; a write that fails part-way (a
// full disk) is taken back — the file truncated to its size before, under
// the lock the caller holds — so that a failed release leaves no torn
// line for every later run to stumble on.
func appendLine(f *os.File, line []byte) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	before := st.Size()
	_, werr := writeAt(f, line)
	if werr == nil {
		werr = f.Sync()
	}
	if werr != nil {
		if terr := f.Truncate(before); terr != nil {
			return fmt.Errorf("%w; taking the partial line back failed too: %v (dpfeat budget repair drops it)", werr, terr)
		}
		f.Sync()
	}
	return werr
}

// writeAt is the write appendLine makes (a variable so that tests can
// simulate a full disk).
var writeAt = func(f *os.File, b []byte) (int, error) { return f.Write(b) }
