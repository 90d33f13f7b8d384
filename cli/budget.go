package cli

import (
	"fmt"
	"os"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/ledger"
)

func ledgerFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "features", Usage: "the private feature file (its content hash keys the ledger)"},
		&ucli.StringFlag{Name: "name", Usage: "key the ledger by this name instead of --features' content"},
		&ucli.StringFlag{Name: "ledger", Usage: "ledger folder (default $DPFEAT_LEDGER, else ~/.local/share/dpfeat/ledger)"},
	}
}

// ledgerDir is the ledger folder: --ledger, else the default.
func ledgerDir(c *ucli.Context) string {
	if dir := c.String("ledger"); dir != "" {
		return dir
	}
	return ledger.DefaultDir()
}

// ledgerFor finds the ledger a command names: --name, or --features' hash.
func ledgerFor(c *ucli.Context, data string) (*ledger.Ledger, error) {
	dir := ledgerDir(c)
	var key string
	var err error
	if n := c.String("name"); n != "" {
		key, err = ledger.NameKey(n)
	} else if data != "" {
		key, err = dataKey(data)
	} else {
		return nil, userErrorf("give --features FILE or --name NAME")
	}
	if err != nil {
		return nil, userErrorf("%v", err)
	}
	return ledger.At(dir, key), nil
}

func budgetCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "budget",
		Usage: "a privacy budget per private dataset: every fit on it is recorded and refused past the budget",
		Subcommands: []*ucli.Command{
			{
				Name:      "init",
				Usage:     "set the total budget (ε, δ) of a dataset",
				UsageText: "dpfeat budget init --features FEATS.arrow --epsilon E --delta D [--name NAME] [--ledger DIR]",
				Flags: append(ledgerFlags(),
					&ucli.Float64Flag{Name: "epsilon", Usage: "total ε (required)"},
					&ucli.Float64Flag{Name: "delta", Usage: "total δ (required; 0 only for pure-DP releases)"}),
				Action: budgetInit,
			},
			{
				Name:      "show",
				Usage:     "list a dataset's releases and what is left of its budget",
				UsageText: "dpfeat budget show --features FEATS.arrow [--name NAME] [--ledger DIR] [--json]",
				Flags:     append(ledgerFlags(), jsonFlag()),
				Action:    budgetShow,
			},
			{
				Name:  "repair",
				Usage: "make a damaged ledger usable again, never counting less than was spent",
				UsageText: "dpfeat budget repair --features FEATS.arrow [--name NAME] [--ledger DIR] [--spend-all]\n\n" +
					"Keeps the ledger as it was in LEDGER.damaged-TIME first. A last line cut short is a write that never\n" +
					"completed (dpfeat writes a release's output only after its line is synced): it is dropped. Other damage\n" +
					"(an edited or corrupted line) may hide a release of unknown cost: --spend-all drops those lines and\n" +
					"counts the budget as spent, keeping every intact release listed; without it nothing changes.",
				Flags: append(ledgerFlags(),
					&ucli.BoolFlag{Name: "spend-all", Usage: "when damaged lines may hide releases, drop them and count the whole budget as spent"}),
				Action: budgetRepair,
			},
		},
	}
}

func budgetInit(c *ucli.Context) error {
	if !c.IsSet("epsilon") || !c.IsSet("delta") {
		return userErrorf("--epsilon and --delta are required")
	}
	l, err := ledgerFor(c, c.String("features"))
	if err != nil {
		return err
	}
	if err := l.Init(c.Float64("epsilon"), c.Float64("delta"), c.String("features")); err != nil {
		return userErrorf("%v", err)
	}
	return printf(c.App.Writer, "budget (ε = %g, δ = %g) set for %s in %s\n", c.Float64("epsilon"), c.Float64("delta"), l.Key, l.Path)
}

type budgetReport struct {
	Key        string           `json:"key"`
	Ledger     string           `json:"ledger"`
	Budget     ledger.Budget    `json:"budget"`
	Releases   []ledger.Release `json:"releases"`
	Spent      accounting.Float `json:"epsilon_spent"`
	Remaining  accounting.Float `json:"epsilon_remaining"`
	Accountant string           `json:"accountant"`
}

func budgetShow(c *ucli.Context) error {
	l, err := ledgerFor(c, c.String("features"))
	if err != nil {
		return err
	}
	return showLedger(c, l)
}

// showLedger prints a ledger's releases, repairs and what is left.
func showLedger(c *ucli.Context, l *ledger.Ledger) error {
	rep, text, err := ledgerState(l)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, rep)
	}
	return printf(c.App.Writer, "%s", text)
}

// ledgerState is a ledger's state, as budget show --json and as text
// (budget show, the HTML report).
func ledgerState(l *ledger.Ledger) (budgetReport, string, error) {
	b, rel, g, err := l.Status()
	if err != nil {
		return budgetReport{}, "", userErrorf("%v", err)
	}
	left, err := ledger.Left(b, rel)
	if err != nil {
		return budgetReport{}, "", userErrorf("%s: %v", l.Path, err)
	}
	rep := budgetReport{Key: l.Key, Ledger: l.Path, Budget: b, Releases: rel, Spent: g.Epsilon,
		Remaining: accounting.Float(left), Accountant: string(g.Accountant)}
	if rep.Releases == nil {
		rep.Releases = []ledger.Release{}
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%s (%s): budget (ε = %g, δ = %g)\n", l.Key, l.Path, b.Epsilon, b.Delta)
	for i, r := range rel {
		forced := ""
		if r.Forced {
			forced = " [forced past the budget]"
		}
		fmt.Fprintf(&s, "  %d. %s  %s → %s: %s%s\n", i+1, r.Time, r.Method, r.Output, r.Guarantee.String(), forced)
	}
	for _, r := range b.Repairs {
		fmt.Fprintf(&s, "  repaired %s: %s (lines %v as they were: %s)\n", r.Time, r.Reason, r.Lines, r.Backup)
	}
	fmt.Fprintf(&s, "spent: ε = %s at δ = %g (%s, composed over %d releases); left: ε = %s (the largest ε at δ = %g one more Gaussian release can take, composed with these by the same accountant)\n",
		accounting.FormatUp(float64(g.Epsilon)), b.Delta, g.Accountant, len(rel), accounting.FormatRemaining(float64(rep.Remaining)), b.Delta)
	return rep, s.String(), nil
}

func budgetRepair(c *ucli.Context) error {
	l, err := ledgerFor(c, c.String("features"))
	if err != nil {
		return err
	}
	r, err := l.Repair(c.Bool("spend-all"))
	if err != nil {
		return userErrorf("%v", err)
	}
	if err := printf(c.App.Writer, "%s: repaired — %s; the ledger as it was: %s\n", l.Path, r.Reason, r.Backup); err != nil {
		return err
	}
	if !l.Exists() {
		return nil
	}
	return showLedger(c, l)
}

// findLedger returns the ledger of the training data (named by
// --ledger-name, else found by the file's content hash), or nil when it
// has none.
func findLedger(c *ucli.Context, train string) (*ledger.Ledger, error) {
	dir := ledgerDir(c)
	if n := c.String("ledger-name"); n != "" {
		key, err := ledger.NameKey(n)
		if err != nil {
			return nil, userErrorf("--ledger-name: %v", err)
		}
		l := ledger.At(dir, key)
		if !l.Exists() {
			return nil, userErrorf("--ledger-name %s: no ledger in %s (dpfeat budget init --name %s …)", n, dir, n)
		}
		return l, nil
	}
	if !anyLedgers(dir) {
		return nil, nil // nothing to hash for
	}
	if st, err := os.Stat(train); err == nil && st.IsDir() {
		return nil, nil // an image folder has no content hash: name its ledger with --ledger-name
	}
	return hashedLedger(dir, train, c.Bool("other-data"))
}

// otherDataFlag says a training file without a data identity is none of
// the data the ledgers hold (hashedLedger).
func otherDataFlag() ucli.Flag {
	return &ucli.BoolFlag{Name: "other-data", Usage: "the training data is none of the data whose budgets the ledgers hold: a file without a data identity (CSV, .npy, another tool's file, a copy that lost it) is otherwise refused while ledgers exist"}
}

// anyLedgers reports whether dir holds any ledger (else no file needs
// hashing to find its own).
func anyLedgers(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}

// hashedLedger returns the ledger in dir keyed by file's data identity,
// else its content (one read of it), or nil when there is none. A file
// without a data identity that no ledger knows is refused while ledgers
// exist (#36 item 5), unless otherData says it holds none of their data:
// it may be the data of one of them in a form that lost the identity (a
// CSV or .npy written by convert, another tool's copy), and fitting it
// would spend that budget unrecorded.
func hashedLedger(dir, file string, otherData bool) (*ledger.Ledger, error) {
	key, err := dataKey(file)
	if err != nil {
		return nil, err
	}
	if l := ledger.At(dir, key); l.Exists() {
		return l, nil
	}
	meta, err := features.ReadMetadata(file)
	switch {
	case err != nil || meta.DataID != "" || otherData:
		return nil, nil
	case meta.Subset != nil:
		// Derived from another file before identities were recorded: its
		// parent's ledger cannot be found from it.
		return nil, userErrorf("%s was derived (%s) from %s but carries no data identity (dpfeat.data_id; made by an older dpfeat), so the budget of the data it comes from cannot be found and the run is refused: extract the data again and derive the file anew, or name the ledger with --ledger-name",
			file, meta.Subset.Kind, meta.Subset.From)
	}
	return nil, userErrorf("%s carries no data identity (a CSV or .npy file, another tool's, or a copy that lost it) and budget ledgers exist in %s: name its data's ledger with --ledger-name, or pass --other-data if it is none of their data", file, dir)
}

// dataKey is the ledger key of a feature file: the identity of the data
// it was extracted from (dpfeat.data_id, kept by split and imbalance and
// shared by every encoder's features of the same examples), else the
// file's own content hash.
func dataKey(file string) (string, error) {
	if meta, err := features.ReadMetadata(file); err == nil && meta.DataID != "" {
		return meta.DataID, nil
	}
	return ledger.FileKey(file)
}

// budgetLeft returns l's budget, or refuses a run on train when that
// budget is already spent (then says what follows).
func budgetLeft(train string, l *ledger.Ledger, then string) (ledger.Budget, error) {
	b, rel, g, err := l.Status()
	if err != nil {
		return b, userErrorf("%v", err)
	}
	if float64(g.Epsilon) >= b.Epsilon {
		return b, userErrorf("%s: its privacy budget (ε = %g) is spent (ε = %s over %d releases; dpfeat budget show): %s", train, b.Epsilon, accounting.FormatUp(float64(g.Epsilon)), len(rel), then)
	}
	return b, nil
}

// runLedger finds the ledger of a run's data (hashing reads the file:
// once per run) and, for a private run, refuses it before any work when
// the budget cannot cover ε (checkBudgetEarly).
func runLedger(c *ucli.Context, data string, eps float64, private bool) (*ledger.Ledger, error) {
	l, err := findLedger(c, data)
	if err != nil || !private {
		return l, err
	}
	return l, checkBudgetEarly(c, l, data, eps)
}

// checkBudgetEarly refuses, before any work, a run on budgeted data (l,
// from findLedger; nil: none) whose budget is already spent or smaller
// than the ε the run asks for alone (the exact check is when the release
// is recorded).
func checkBudgetEarly(c *ucli.Context, l *ledger.Ledger, train string, eps float64) error {
	if l == nil || c.Bool("overspend") {
		return nil
	}
	b, err := budgetLeft(train, l, "pass --overspend to spend past it, recorded")
	if err != nil {
		return err
	}
	if eps > b.Epsilon {
		return userErrorf("%s: this run asks for ε = %g, more than the data's whole budget (ε = %g)", train, eps, b.Epsilon)
	}
	return nil
}

// spendBudget records a release in l, the budget ledger of the training
// data (from findLedger), and refuses it past the budget unless
// --overspend. Without a ledger for the data (l nil) nothing is recorded.
func spendBudget(c *ucli.Context, l *ledger.Ledger, train, method string, g accounting.Guarantee, out string) error {
	ch := newCharger(c, l, method, out)
	if ch == nil {
		return nil
	}
	ch.Charge(g)
	return reportCharge(c, train, ch)
}

// newCharger is the charger of one release of method to l (nil without a
// ledger): the whole release is one entry.
func newCharger(c *ucli.Context, l *ledger.Ledger, method, out string) *ledger.Charger {
	if l == nil {
		return nil
	}
	return &ledger.Charger{L: l, Release: ledger.Release{Method: method, Output: out, Version: Version, Forced: c.Bool("overspend")}}
}

// reportCharge says what ch's ledger holds after its release: the
// refusal as the user's error, an overspend as a warning, else one line.
func reportCharge(c *ucli.Context, train string, ch *ledger.Charger) error {
	if ch == nil || (!ch.Charged() && ch.Err == nil) {
		return nil
	}
	l, total := ch.L, ch.Total
	if ch.Err != nil && !ch.Charged() {
		return userErrorf("%s has a privacy budget (%s): %v", train, l.Path, ch.Err)
	}
	if b, _, _, err := l.Status(); err == nil && float64(total.Epsilon) > b.Epsilon {
		why := "its exact guarantee, settled after noise was drawn under its plan," // a plan within the budget, settled past it
		if ch.Release.Forced {
			why = "--overspend:"
		}
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: WARNING: %s this release takes the data past its budget: ε = %s spent of a budget of ε = %g (%s), recorded as an overspend in %s\n",
			why, accounting.FormatUp(float64(total.Epsilon)), b.Epsilon, total.Accountant, l.Path)
		return nil
	}
	fmt.Fprintf(c.App.ErrWriter, "dpfeat: budget ledger %s: with this release ε = %s of its budget is spent (%s)\n", l.Path, accounting.FormatUp(float64(total.Epsilon)), total.Accountant)
	return nil
}

// overspendFlag is the one way past a budget: --force only replaces
// outputs (#37).
func overspendFlag() ucli.Flag {
	return &ucli.BoolFlag{Name: "overspend", Usage: "spend past the data's budget ledger (or make a non-private release on budgeted data): printed as a warning, recorded as an overspend"}
}
