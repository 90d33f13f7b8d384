package cli

import (
	"bytes"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/internal/atomicfile"
	"github.com/dpfeat/dpfeat/sweep"
)

func reportCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "report",
		Usage: "one self-contained HTML page of sweep results: plots, the summary, every guarantee, the budget",
		UsageText: "dpfeat report --results RESULTS.arrow --out report.html [--features FEATS | --name N] [--ledger DIR] [--share-y] [--force]\n\n" +
			"The page needs nothing beside it (plots are inline SVG): a plot per dataset, the summary table with\n" +
			"each selected setting's guarantee, every job with its guarantee, and, with --features or --name,\n" +
			"the state of the data's privacy-budget ledger.\n\n" +
			"Example:\n   dpfeat report --results results.arrow --features train.arrow --out report.html",
		Flags: append([]ucli.Flag{
			&ucli.StringFlag{Name: "results", Usage: "results file written by dpfeat sweep (required)"},
			&ucli.StringFlag{Name: "out", Usage: "the HTML file to write (required)"},
			&ucli.BoolFlag{Name: "share-y", Usage: "one y range for every plot"},
			forceFlag(),
		}, ledgerFlags()...),
		Action: reportAction,
	}
}

func reportAction(c *ucli.Context) error {
	results, err := requiredString(c, "results")
	if err != nil {
		return err
	}
	if err := checkExtension("out", c.String("out"), ".html", ".htm"); err != nil {
		return err
	}
	outs, err := outputs(c, results, "out")
	if err != nil {
		return err
	}
	rows, err := sweep.ReadResults(results)
	if err != nil {
		return userErrorf("%v", err)
	}
	o := sweep.ReportOptions{Results: results, Version: Version, Plot: sweep.PlotOptions{ShareY: c.Bool("share-y")}}
	if c.String("features") != "" || c.String("name") != "" {
		l, err := ledgerFor(c, c.String("features"))
		if err != nil {
			return err
		}
		if _, o.Ledger, err = ledgerState(l); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	if err := sweep.WriteReport(&b, rows, o); err != nil {
		return internal(fmt.Errorf("report: %w", err))
	}
	if err := atomicfile.WriteBytes(outs[0], b.Bytes()); err != nil {
		return err
	}
	return printf(c.App.Writer, "%s: %d jobs, %d bytes\n", outs[0], len(rows), b.Len())
}
