package cli

import (
	"errors"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/features"
)

func convertCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "convert",
		Usage: "convert features (or predictions) between dpfeat's Arrow files and Parquet, CSV, NumPy .npy/.npz",
		UsageText: "dpfeat convert --in FILE --out FILE [--classes …] [--label-column …] [--force] [--json]\n\n" +
			"--in: any file fit reads — a dpfeat feature file, an Arrow IPC file or stream from another writer,\n" +
			"Parquet (a list column of numbers, or one numeric column per dimension), NumPy .npz (X, y [, ids,\n" +
			"classes]) or .npy (X; labels from --labels), CSV — or a predictions file from dpfeat predict.\n" +
			"--out's extension picks the format: .arrow (a dpfeat feature file with full metadata), .parquet,\n" +
			".csv/.tsv, .npy (features or scores alone), .npz.\n\n" +
			"Examples:\n   dpfeat convert --in embeddings.parquet --out train.arrow\n" +
			"   dpfeat convert --in train.arrow --out train.npz\n" +
			"   dpfeat convert --in pred.arrow --out pred.csv",
		Flags: append([]ucli.Flag{
			&ucli.StringFlag{Name: "in", Usage: "file to convert (required)"},
			&ucli.StringFlag{Name: "out", Usage: "file to write; its extension picks the format (required)"},
			&ucli.BoolFlag{Name: "force", Usage: "replace --out if it exists"},
			jsonFlag(),
		}, importFlags()...),
		Action: convertAction,
	}
}

func convertAction(c *ucli.Context) error {
	in, err := requiredString(c, "in")
	if err != nil {
		return err
	}
	if err := checkExtension("out", c.String("out"), features.TableExtensions...); err != nil {
		return err
	}
	outs, err := outputs(c, in, "out")
	if err != nil {
		return err
	}
	out := outs[0]
	imp, err := importOptions(c)
	if err != nil {
		return err
	}
	format := features.TableFormat(out)
	report := map[string]any{"in": in, "out": out, "format": format}
	p, err := features.ReadPredictions(in)
	if err != nil && !errors.Is(err, features.ErrNotPredictions) {
		return userErrorf("%v", err)
	}
	if err == nil {
		if err := features.WritePredictions(out, p); err != nil {
			return err
		}
		report["kind"], report["rows"], report["classes"] = "predictions", len(p.Predicted), len(p.Classes)
	} else {
		f, err := features.Open(in, features.ReadOptions{Import: imp})
		if err != nil {
			return userErrorf("%v", err)
		}
		defer f.Close()
		if line := f.Imported().Note(in, f.Classes()); line != "" {
			fmt.Fprintf(c.App.ErrWriter, "dpfeat: %s\n", line)
		}
		if err := features.Export(f, out); err != nil {
			return fmt.Errorf("write %s: %w", out, err)
		}
		report["kind"], report["rows"], report["dim"], report["classes"] = "features", f.Rows(), f.Dim(), len(f.Classes())
		if format == features.TableNPY {
			fmt.Fprintf(c.App.ErrWriter, "dpfeat: %s holds the features alone; .npz keeps labels, ids and class names too\n", out)
		}
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, report)
	}
	return printf(c.App.Writer, "%s: %v %s, %v rows (%s)\n", out, report["kind"], format, report["rows"], in)
}
