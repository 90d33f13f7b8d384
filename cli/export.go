package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/internal/atomicfile"
	"github.com/dpfeat/dpfeat/sweep"
)

func exportCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "export",
		Usage: "write sweep results as CSV, JSON, Parquet, a Jupyter notebook, or plots",
		UsageText: "dpfeat export --results RESULTS.arrow --format csv|json|parquet|ipynb|png|svg --out PATH [--summary] [--force]\n\n" +
			"csv, json, parquet: one row per job (pandas, polars and DuckDB read them without options;\n" +
			"JSON writes the references' ε = ∞ as null); with --summary (csv, json), the summary instead:\n" +
			"per dataset, method and ε, the setting chosen by validation accuracy and its test accuracy.\n" +
			"ipynb: a notebook that loads RESULTS.arrow with pyarrow/pandas and remakes the tables and plots.\n" +
			"png, svg: test accuracy against ε per dataset (median and min–max band over seeds), and\n" +
			"balanced and minority-class accuracy for imbalanced training files.\n\n" +
			"Example:\n   dpfeat export --results results.arrow --format png --out accuracy.png",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "results", Usage: "results file written by dpfeat sweep (required)"},
			&ucli.StringFlag{Name: "format", Usage: strings.Join(sweep.Formats, ", ") + " (required)"},
			&ucli.StringFlag{Name: "out", Usage: "file to write (required)"},
			&ucli.BoolFlag{Name: "summary", Usage: "csv, json: write the summary rather than every job"},
			&ucli.BoolFlag{Name: "share-y", Usage: "png, svg: one y range for every panel (to compare datasets)"},
			&ucli.BoolFlag{Name: "force", Usage: "replace --out if it exists"},
		},
		Action: exportAction,
	}
}

func exportAction(c *ucli.Context) error {
	results, err := requiredString(c, "results")
	if err != nil {
		return err
	}
	format, err := requiredString(c, "format")
	if err != nil {
		return err
	}
	format = strings.ToLower(format)
	if !slices.Contains(sweep.Formats, format) {
		return userErrorf("--format must be one of %s, got %q", strings.Join(sweep.Formats, ", "), format)
	}
	out, err := requiredString(c, "out")
	if err != nil {
		return err
	}
	if err := guardOutputs(flagPaths(c, "out"), flagPaths(c, "results")); err != nil {
		return err
	}
	summary := c.Bool("summary")
	if summary && format != "csv" && format != "json" {
		return userErrorf("--summary applies to csv and json (the notebook and plots always summarise)")
	}
	if err := refuseExisting(c, "out", out); err != nil {
		return err
	}
	results, cleanup, err := stdinPath(c, "results", results)
	if err != nil {
		return err
	}
	defer cleanup()
	rows, err := sweep.ReadResults(results)
	if err != nil {
		return userErrorf("%v", err)
	}
	rel := results // the notebook loads the results relative to itself
	if a, err := filepath.Abs(results); err == nil {
		if d, err := filepath.Abs(filepath.Dir(out)); err == nil {
			if r, err := filepath.Rel(d, a); err == nil {
				rel = r
			}
		}
	}
	// Rendered in memory first: a failure leaves no partial file.
	var buf bytes.Buffer
	if err := sweep.Export(&buf, format, rows, sweep.ExportOptions{Summary: summary, Results: filepath.ToSlash(rel), Version: Version, Plot: sweep.PlotOptions{ShareY: c.Bool("share-y")}}); err != nil {
		return internal(fmt.Errorf("export %s: %w", format, err))
	}
	if out == "-" {
		_, err := c.App.Writer.Write(buf.Bytes())
		if err != nil {
			return internal(fmt.Errorf("write standard output: %w", err))
		}
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: wrote %s to standard output (%d jobs)\n", format, len(rows))
		return nil
	}
	if err := atomicfile.WriteBytes(out, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "dpfeat: wrote %s (%s, %d jobs)\n", out, format, len(rows))
	return nil
}
