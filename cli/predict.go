package cli

import (
	"fmt"
	"os"
	"path/filepath"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/interrupt"
	"github.com/dpfeat/dpfeat/models"
)

func predictCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "predict",
		Usage: "write a classifier's predictions and per-class scores for a feature file, or for images through an encoder",
		UsageText: "dpfeat predict --classifier CLF --features FEATS --out PRED [--force]\n" +
			"dpfeat predict --classifier CLF --encoder ENC.onnx --data IMAGES --out PRED [--save-features FEATS.arrow]\n\n" +
			"FEATS is any feature file fit reads (see dpfeat convert). With --encoder and --data, the images are\n" +
			"encoded in this run and nothing is kept unless --save-features names a file; an image folder may be\n" +
			"flat (unlabeled) or hold the classifier's class folders.\n" +
			"PRED's extension picks the format: .arrow (columns id if known, label (true label or null), predicted,\n" +
			"predicted_class, scores: fixed_size_list<float32>[classes]), .parquet (the same), .csv/.tsv, .npy\n" +
			"(the scores) or .npz.\n\n" +
			"Examples:\n   dpfeat predict --classifier clf.safetensors --features test.arrow --out pred.arrow\n" +
			"   dpfeat predict --classifier clf.safetensors --encoder enc.onnx --data photos/ --out pred.csv",
		Flags: append(append([]ucli.Flag{
			&ucli.StringFlag{Name: "classifier", Usage: "classifier file (required)"},
			&ucli.StringFlag{Name: "features", Usage: "feature file (required unless --encoder and --data)"},
			&ucli.StringFlag{Name: "out", Usage: "predictions file to write; its extension picks the format (required)"},
			&ucli.StringFlag{Name: "save-features", Usage: "with --encoder: also keep the images' features in this feature file"},
			&ucli.BoolFlag{Name: "force", Usage: "replace outputs that exist; predict even if the features come from another encoder"},
			jsonFlag(),
		}, encoderFlags(false)...), importFlags()...),
		Action: predictAction,
	}
}

func predictAction(c *ucli.Context) error {
	clfPath, err := requiredString(c, "classifier")
	if err != nil {
		return err
	}
	featPath := c.String("features")
	fromImages := c.IsSet("encoder") || c.IsSet("data")
	switch {
	case fromImages && featPath != "":
		return userErrorf("give --features, or --encoder and --data, not both")
	case fromImages && (c.String("encoder") == "" || c.String("data") == ""):
		return userErrorf("--encoder and --data go together: the encoder and the images to predict")
	case !fromImages && featPath == "":
		return userErrorf("--features is required (or --encoder and --data to predict from images)")
	case !fromImages && c.IsSet("save-features"):
		return userErrorf("--save-features keeps the features of --encoder run over --data")
	}
	in := featPath
	if fromImages {
		in = c.String("data")
	}
	if err := guardOutputs(flagPaths(c, "out", "save-features"), flagPaths(c, "classifier", "features", "encoder", "data")); err != nil {
		return err
	}
	if err := checkExtension("out", c.String("out"), append([]string{"-"}, features.TableExtensions...)...); err != nil {
		return err
	}
	if err := checkExtension("save-features", c.String("save-features"), ".arrow"); err != nil {
		return err
	}
	outs, err := outputs(c, in, "out")
	if err != nil {
		return err
	}
	if outs[0] == "-" && c.Bool("json") {
		return userErrorf("--out - writes the predictions to standard output: --json cannot share it")
	}
	if fromImages {
		path, cleanup, err := predictFeatures(c, clfPath)
		if err != nil {
			return err
		}
		defer cleanup()
		featPath = path
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
}

// predictFeatures runs --encoder over --data for predict: into
// --save-features, or a temporary file that cleanup removes. An image
// folder is read with the classifier's classes.
func predictFeatures(c *ucli.Context, clfPath string) (string, func(), error) {
	clf, err := models.LoadClassifier(clfPath)
	if err != nil {
		return "", nil, err
	}
	out, cleanup := c.String("save-features"), func() {}
	if out == "" {
		dir, err := os.MkdirTemp("", "dpfeat-predict-")
		if err != nil {
			return "", nil, userErrorf("%v", err)
		}
		forget := interrupt.Temporary(dir)
		// The folder made just above, for this prediction's features alone.
		out, cleanup = filepath.Join(dir, "features.arrow"), func() { os.RemoveAll(dir); forget() }
	} else if err := refuseExisting(c, "save-features", out); err != nil {
		return "", nil, err
	}
	dopt := features.DatasetOptions{Split: c.String("split"), Expected: clf.Classes}
	if _, err := extractTo(c, c.String("encoder"), c.String("data"), out, dopt, false); err != nil {
		cleanup()
		return "", nil, err
	}
	return out, cleanup, nil
}
