package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// Version is dpfeat's version; release builds set it with
// -ldflags "-X github.com/dpfeat/dpfeat/cli.Version=…".
var Version = "0.1.0-dev"

// internalError marks a failure that is dpfeat's fault, not the user's
// (exit code 2).
type internalError struct{ err error }

func (e internalError) Error() string { return e.err.Error() }
func (e internalError) Unwrap() error { return e.err }

// internal wraps err as an internal error.
func internal(err error) error {
	if err == nil {
		return nil
	}
	return internalError{err}
}

// userErrorf returns a user error (exit code 1).
func userErrorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func init() {
	// A flag whose usage states its default, or says when it is required,
	// gets no second "(default: …)" from urfave/cli: "(default 1)
	// (default: per method …)" and "(required …) (default: 0)" read as
	// contradictions.
	stringify := ucli.FlagStringer
	ucli.FlagStringer = func(f ucli.Flag) string {
		s := stringify(f)
		if i := strings.LastIndex(s, " (default: "); i >= 0 && (strings.Contains(s[:i], "default") || strings.Contains(s[:i], "required")) {
			s = s[:i]
		}
		return s
	}
}

// NewApp returns the dpfeat command-line application writing to the given
// streams.
func NewApp(stdout, stderr io.Writer) *ucli.App {
	app := &ucli.App{
		Name:    "dpfeat",
		Usage:   "differentially private image classifiers on the features of frozen encoders",
		Version: Version,
		Description: "dpfeat trains classifiers with a provable (ε, δ) differential-privacy guarantee on\n" +
			"features of frozen encoders, and accounts for every release with one accountant.\n\n" +
			"Example:\n   dpfeat privacy sigma --epsilon 1 --delta 1e-5 --releases 3",
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		Commands: []*ucli.Command{
			extractCommand(),
			inspectCommand(),
			fitCommand(),
			evalCommand(),
			predictCommand(),
			splitCommand(),
			imbalanceCommand(),
			sweepCommand(),
			exportCommand(),
			exportONNXCommand(),
			convertCommand(),
			reportCommand(),
			synthCommand(),
			pretrainCommand(),
			finetuneCommand(),
			budgetCommand(),
			auditCommand(),
			jobServerCommand(),
			privacyCommand(),
			versionCommand(),
		},
		// Errors are printed and turned into exit codes by Run, never by
		// urfave/cli itself.
		ExitErrHandler: func(*ucli.Context, error) {},
		OnUsageError: func(_ *ucli.Context, err error, _ bool) error {
			return userErrorf("%s", flagErrorText(err))
		},
	}
	setUsageErrors(app.Commands, "")
	addRenamed(app.Commands)
	return app
}

// setUsageErrors makes every command report flag errors as user errors
// instead of printing the whole help text.
func setUsageErrors(cmds []*ucli.Command, parent string) {
	for _, c := range cmds {
		path := strings.TrimSpace(parent + " " + c.Name)
		c.OnUsageError = func(_ *ucli.Context, err error, _ bool) error {
			return userErrorf("%s (see 'dpfeat %s --help')", flagErrorText(err), path)
		}
		setUsageErrors(c.Subcommands, path)
	}
}

func flagErrorText(err error) string {
	s := err.Error()
	// urfave/cli says `invalid value "x" for flag -delta: parse error`;
	// name the flag the way users type it.
	s = strings.ReplaceAll(s, "flag -", "flag --")
	s = strings.ReplaceAll(s, "defined: -", "defined: --")
	return s
}

// Run runs dpfeat with the given arguments (args[0] is the program name)
// and returns the process exit code: 0 success, 1 user error, 2 internal
// error. Panics are reported as internal errors.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	return RunIO(ctx, args, os.Stdin, stdout, stderr)
}

// RunIO is Run with standard input given too (a path "-" reads it).
func RunIO(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "dpfeat: internal error: %v\n%s", r, debug.Stack())
			code = 2
		}
	}()
	app := NewApp(stdout, stderr)
	app.Reader = stdin
	if msg := unknownCommand(app, args); msg != "" {
		fmt.Fprintf(stderr, "dpfeat: %s\n", msg)
		return 1
	}
	err := app.RunContext(ctx, interspersed(app, args))
	code = exitCode(err)
	switch code {
	case 1:
		fmt.Fprintf(stderr, "dpfeat: %s\n", oneLine(err.Error()))
	case 2:
		fmt.Fprintf(stderr, "dpfeat: internal error: %v\n", err)
	}
	return code
}

// unknownCommand says which command or subcommand in args is not one
// (`dpfeat fti`, `dpfeat budget shw`), with the nearest name; "" if none.
func unknownCommand(app *ucli.App, args []string) string {
	cmds, path := app.VisibleCommands(), "dpfeat"
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") || a == "help" || len(cmds) == 0 {
			return ""
		}
		var found *ucli.Command
		for _, c := range cmds {
			if c.HasName(a) {
				found = c
			}
		}
		if found == nil {
			return fmt.Sprintf("unknown command %q%s (%s --help lists them)", strings.TrimPrefix(path+" "+a, "dpfeat "), didYouMean(a, cmds), path)
		}
		path += " " + found.Name
		cmds = found.VisibleCommands()
	}
	return ""
}

// didYouMean names the command nearest to name by edit distance, when it
// is near enough to be a typo (at most a third of its letters, and 2).
func didYouMean(name string, cmds []*ucli.Command) string {
	best, bestD := "", 1<<30
	for _, c := range cmds {
		for _, n := range c.Names() {
			if d := editDistance(name, n); d < bestD {
				best, bestD = c.Name, d
			}
		}
	}
	if bestD <= min(2, max(1, len([]rune(name))/3)) {
		return "; did you mean " + best + "?"
	}
	return ""
}

// editDistance is the Damerau–Levenshtein (optimal string alignment)
// distance: an adjacent swap (fti → fit) counts once.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// exitCode maps a command's error to the process exit code.
func exitCode(err error) int {
	var ie internalError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ie):
		return 2
	}
	return 1
}

// oneLine folds a multi-line message (a YAML decoder's list, ONNX
// Runtime's report) into one line: a user error is one line naming the
// culprit and what to do.
func oneLine(msg string) string {
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}
