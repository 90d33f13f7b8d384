package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/internal/fspath"
	"github.com/dpfeat/dpfeat/ledger"
	"github.com/dpfeat/dpfeat/runner/spec"
	"github.com/dpfeat/dpfeat/sweep"
)

func sweepCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "sweep",
		Usage: "run methods × hyperparameters × ε × seeds over feature files and record every job's metrics",
		UsageText: "dpfeat sweep --config SWEEP.yaml --out RESULTS.arrow [--jobs N] [--resume | --force] [--json]\n\n" +
			"The configuration names datasets (train, validation file or fraction, test, optional public),\n" +
			"methods with hyperparameter grids, epsilons, delta and seeds; see docs/sweep.md. One row per job goes\n" +
			"to RESULTS.arrow (Arrow IPC); finished jobs are journaled, so an interrupted sweep continues with\n" +
			"--resume. The summary picks each method's hyperparameters by validation accuracy, never test.\n" +
			"--runner spreads the jobs over an Apache Beam runner's workers (docs/sweep.md, On a runner).\n\n" +
			"Example:\n   dpfeat sweep --config bench/sweep.yaml --out results.arrow --jobs 2",
		Flags: append([]ucli.Flag{
			&ucli.StringFlag{Name: "config", Usage: "sweep configuration (YAML, required)"},
			&ucli.StringFlag{Name: "out", Usage: "results file to write (Arrow IPC, required)"},
			&ucli.IntFlag{Name: "jobs", Usage: "fits to run at once (default: half the cores; each fit uses several)"},
			&ucli.Int64Flag{Name: "max-jobs", Value: sweep.DefaultMaxJobs, Usage: "refuse a grid of more jobs than this (counted before any is made)"},
			&ucli.BoolFlag{Name: "resume", Usage: "continue the sweep that wrote --out (jobs already done are kept)"},
			&ucli.BoolFlag{Name: "force", Usage: "start over even if --out or its journal exists"},
			&ucli.StringFlag{Name: "classifiers", Usage: "folder to write each job's classifier to (JOB.safetensors, named by the results' job column); with noise: seeded, 'dpfeat fit --seed' and the row's noise_seed reproduce it"},
			&ucli.StringFlag{Name: "ledger", Usage: "budget ledger folder: jobs on a training file with a budget there are recorded, and refused past it"},
			jsonFlag(),
		}, runnerFlags("run the jobs")...),
		Action: sweepAction,
	}
}

func sweepAction(c *ucli.Context) error {
	cfgPath, err := requiredString(c, "config")
	if err != nil {
		return err
	}
	out, err := requiredString(c, "out")
	if err != nil {
		return err
	}
	if c.Int("jobs") < 0 {
		return userErrorf("--jobs must be at least 1, got %d", c.Int("jobs"))
	}
	// Every check before any work: the configuration, then the output.
	if c.Int64("max-jobs") < 1 {
		return userErrorf("--max-jobs must be at least 1, got %d", c.Int64("max-jobs"))
	}
	cfg, err := sweep.LoadConfigLimit(cfgPath, c.Int64("max-jobs"))
	if err != nil {
		return userErrorf("%v", err)
	}
	ins := flagPaths(c, "config")
	for _, d := range cfg.Datasets {
		for _, p := range []string{d.Train, d.Test, d.Validation, d.Public} {
			if _, err := os.Stat(p); err == nil {
				ins = append(ins, [2]string{"config's dataset " + d.Name, p})
			}
		}
	}
	if err := guardOutputs([][2]string{{"out", out}, {"out (its journal)", sweep.JournalPath(out)}}, ins); err != nil {
		return err
	}
	o := sweep.RunOptions{Out: out, Jobs: c.Int("jobs"), Resume: c.Bool("resume"), Force: c.Bool("force"), Version: Version,
		Classifiers: c.String("classifiers"),
		Progress:    func(format string, args ...any) { fmt.Fprintf(c.App.ErrWriter, "dpfeat: "+format+"\n", args...) }}
	if err := sweep.CheckOutput(o); err != nil {
		return userErrorf("%v", err)
	}
	if o.Charger, o.Budget, err = sweepLedger(c, cfg, out); err != nil {
		return err
	}
	if o.Remote, err = sweepRemote(c, cfg, cfgPath, out); err != nil {
		return err
	}
	jobs, _ := cfg.Jobs()
	fmt.Fprintf(c.App.ErrWriter, "dpfeat: sweep %s: %d jobs\n", cfgPath, len(jobs))
	var refused error // the whole sweep does not fit a budget: nothing ran
	if check := o.Budget; check != nil {
		o.Budget = func(ds int, costs []accounting.Guarantee) error {
			refused = check(ds, costs)
			return refused
		}
	}
	rows, err := sweep.Run(c.Context, cfg, o)
	if refused != nil {
		return refused
	}
	if err != nil {
		if c.Context.Err() != nil {
			return userErrorf("sweep interrupted: finished jobs are in %s; continue with --resume", sweep.JournalPath(out))
		}
		return userErrorf("sweep %s: %v (finished jobs are kept; continue with --resume)", cfgPath, err)
	}
	sum := sweep.Summarize(rows)
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"results": out, "jobs": len(rows), "summary": sum})
	}
	failed := 0
	for _, r := range rows {
		if r.Error != "" {
			failed++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d jobs → %s (%d failed)\n", len(rows), out, failed)
	b.WriteString(sweep.SummaryTable(sum))
	return printf(c.App.Writer, "%s", b.String())
}

// sweepLedger returns the Spend hook that records each job in its
// training file's budget ledger and the Budget hook that checks the whole
// sweep's cost against them before any job, or nils when no dataset has
// a ledger.
func sweepLedger(c *ucli.Context, cfg *sweep.Config, out string) (func(int, string) accounting.Charger, func(int, []accounting.Guarantee) error, error) {
	dir := ledgerDir(c)
	if !anyLedgers(dir) {
		return nil, nil, nil
	}
	ledgers := make([]*ledger.Ledger, len(cfg.Datasets))
	found := false
	for i, d := range cfg.Datasets {
		l, err := hashedLedger(dir, d.Train, d.OtherData)
		if err != nil {
			return nil, nil, err
		}
		if l != nil {
			if _, err := budgetLeft(d.Train, l, "every job on it would be refused"); err != nil {
				return nil, nil, err
			}
			ledgers[i], found = l, true
		}
	}
	if !found {
		return nil, nil, nil
	}
	budget := func(ds int, costs []accounting.Guarantee) error {
		l := ledgers[ds]
		if l == nil {
			return nil
		}
		name := cfg.Datasets[ds].Train
		rs := make([]ledger.Release, len(costs))
		for i, g := range costs {
			rs[i] = ledger.Release{Method: "a sweep job", Guarantee: g}
		}
		g, err := l.Fits(rs)
		if err != nil {
			return userErrorf("%s: the sweep's %d pending jobs do not fit its budget, so none was run: %v", name, len(costs), err)
		}
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: budget ledger %s: the sweep's %d jobs on %s fit its budget (all together ε = %s)\n", l.Path, len(costs), name, accounting.FormatUp(float64(g.Epsilon)))
		return nil
	}
	return func(ds int, method string) accounting.Charger {
		l := ledgers[ds]
		if l == nil {
			return nil
		}
		return &ledger.Charger{L: l, Release: ledger.Release{Method: method, Output: out, Version: Version}}
	}, budget, nil
}

// sweepRemote is RunOptions.Remote for --runner: the jobs run on the
// runner's workers, their rows sent back through a scratch folder beside
// out (made under out's lock, which sweep.Run holds when it calls it, and
// removed after), or nil without --runner.
func sweepRemote(c *ucli.Context, cfg *sweep.Config, cfgPath, out string) (func(context.Context, []sweep.Job, func(sweep.Row) error) error, error) {
	ro, err := runnerFrom(c)
	if err != nil || ro == nil {
		return nil, err
	}
	if c.IsSet("jobs") {
		return nil, userErrorf("--jobs is for fits in this process; with --runner, --runner-workers bounds the jobs one worker process runs at once")
	}
	job := spec.SweepJob{Config: fspath.Resolve(cfgPath), MaxJobs: c.Int64("max-jobs"), Version: Version, Workers: ro.Workers}
	if dir := c.String("classifiers"); dir != "" {
		job.Classifiers = fspath.Resolve(dir)
	}
	return func(ctx context.Context, jobs []sweep.Job, record func(sweep.Row) error) error {
		refs, err := cfg.Refs(jobs)
		if err != nil {
			return err
		}
		tmp, remove, err := runnerTemp("out", out)
		if err != nil {
			return err
		}
		defer remove()
		job.Rows = fspath.Resolve(tmp)
		if err := sweepOnRunner(ctx, job, refs, *ro, record); err != nil {
			return fmt.Errorf("--runner %s: %w", ro.Name(), err)
		}
		return nil
	}, nil
}
