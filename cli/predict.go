package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/features"
)

func predictCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "predict",
		Usage: "write a classifier's predictions and per-class scores for a feature file, as Arrow",
		UsageText: "dpfeat predict --classifier CLF --features FEATS.arrow --out PRED.arrow [--force]\n\n" +
			"Columns: id (if the features have ids), label (true label or null), predicted, predicted_class,\n" +
			"scores (fixed_size_list<float32>[classes]).\n\n" +
			"Example:\n   dpfeat predict --classifier clf.safetensors --features test.arrow --out pred.arrow",
		Flags: append([]ucli.Flag{
			&ucli.StringFlag{Name: "classifier", Usage: "classifier file (required)"},
			&ucli.StringFlag{Name: "features", Usage: "feature file (required)"},
			&ucli.StringFlag{Name: "out", Usage: "predictions file to write (required)"},
			&ucli.BoolFlag{Name: "force", Usage: "predict even if the features come from another encoder"},
			jsonFlag(),
		}, importFlags()...),
		Action: func(c *ucli.Context) error {
			clfPath, err := requiredString(c, "classifier")
			if err != nil {
				return err
			}
			featPath, err := requiredString(c, "features")
			if err != nil {
				return err
			}
			outs, err := outputs(c, featPath, "out")
			if err != nil {
				return err
			}
			if err := guardOutputs(flagPaths(c, "out"), flagPaths(c, "classifier", "features")); err != nil {
				return err
			}
			if outs[0] == "-" && c.Bool("json") {
				return userErrorf("--out - writes the predictions to standard output: --json cannot share it")
			}
			featPath, cleanup, err := stdinPath(c, "features", featPath)
			if err != nil {
				return err
			}
			defer cleanup()
			clf, m, err := loadPair(c, clfPath, featPath)
			if err != nil {
				return err
			}
			pred, scores := clf.Predict(m)
			path, finish, err := stdoutPath(c, outs[0])
			if err != nil {
				return err
			}
			err = features.WritePredictions(path, features.Predictions{Classes: clf.Classes, IDs: m.IDs, Labels: m.Labels,
				Predicted: pred, Scores: scores, Metadata: map[string]string{"dpfeat.classifier": clfPath, "dpfeat.privacy": clf.Guarantee.String()}})
			if err == nil {
				err = finish()
			}
			if err != nil {
				return err
			}
			if outs[0] == "-" {
				fmt.Fprintf(c.App.ErrWriter, "dpfeat: %d predictions over %d classes to standard output\n", m.Rows, len(clf.Classes))
				return nil
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, map[string]any{"out": outs[0], "rows": m.Rows, "classes": len(clf.Classes)})
			}
			return printf(c.App.Writer, "%s: %d predictions over %d classes\n", outs[0], m.Rows, len(clf.Classes))
		},
	}
}
