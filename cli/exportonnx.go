package cli

import (
	"fmt"
	"os"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/internal/atomicfile"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/onnxexport"
)

func exportONNXCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "export-onnx",
		Usage: "write a classifier as an ONNX model, alone (features in) or fused with its encoder (images in)",
		UsageText: "dpfeat export-onnx --classifier CLF --out HEAD.onnx [--force]\n" +
			"dpfeat export-onnx --classifier CLF --encoder ENC.onnx [--manifest ENC.json] [--input images|pixels|encoder] --out MODEL.onnx [--force]\n\n" +
			"The head alone: input features [N, D] float32 (a feature file's rows); outputs scores [N, classes]\n" +
			"float32 (dpfeat predict's scores) and class [N] int64 (the highest score). The classifier's\n" +
			"preprocessing (normalise, pool, scale, centre, clip, learned transform) is in the graph, computed in\n" +
			"float64 as dpfeat predict computes it (--float32 for runtimes without float64 kernels).\n" +
			"Fused with --encoder: the encoder's graph, its output pooled as the manifest says, then the head;\n" +
			"outputs features, scores and class. --input images (the default) takes pixel values 0–255 (float32)\n" +
			"of images of any size, in the manifest's layout and channels, and does the manifest's resize, centre\n" +
			"crop, scale, mean and std in the graph, as dpfeat extract does; --input pixels takes pixels already\n" +
			"resized and cropped to the manifest's height×width; --input encoder keeps the encoder's own input.\n" +
			"Class names, the encoder's sha256, the method and the full privacy statement are in the model's\n" +
			"metadata (keys dpfeat.*); onnxruntime.InferenceSession(path).get_modelmeta().custom_metadata_map.\n\n" +
			"Examples:\n   dpfeat export-onnx --classifier clf.safetensors --out head.onnx\n" +
			"   dpfeat export-onnx --classifier clf.safetensors --encoder enc.onnx --out model.onnx",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "classifier", Usage: "classifier file written by dpfeat fit (required)"},
			&ucli.StringFlag{Name: "encoder", Usage: "ONNX encoder to fuse in front of the head"},
			&ucli.StringFlag{Name: "manifest", Usage: "the encoder's manifest (default: ENC.json beside --encoder)"},
			&ucli.StringFlag{Name: "input", Value: string(onnxexport.TakesImages), Usage: "fused model's input: images (any size), pixels (already resized) or encoder"},
			&ucli.BoolFlag{Name: "float32", Usage: "compute the head in float32, for runtimes without float64 kernels (default: float64, as dpfeat predict)"},
			&ucli.StringFlag{Name: "out", Usage: "ONNX file to write (required)"},
			&ucli.BoolFlag{Name: "force", Usage: "replace --out; fuse even if the classifier was fitted on another encoder's features"},
			jsonFlag(),
		},
		Action: exportONNXAction,
	}
}

func exportONNXAction(c *ucli.Context) error {
	clfPath, err := requiredString(c, "classifier")
	if err != nil {
		return err
	}
	if err := checkExtension("out", c.String("out"), ".onnx"); err != nil {
		return err
	}
	out, err := outputs(c, clfPath, "out")
	if err != nil {
		return err
	}
	if err := guardOutputs(flagPaths(c, "out"), flagPaths(c, "encoder", "manifest")); err != nil {
		return err
	}
	input := c.String("input")
	switch onnxexport.Takes(input) {
	case onnxexport.TakesImages, onnxexport.TakesPixels, onnxexport.TakesEncoderInput:
	default:
		return userErrorf("--input %q: expected images, pixels or encoder", input)
	}
	enc := c.String("encoder")
	if enc == "" && (c.IsSet("manifest") || c.IsSet("input")) {
		return userErrorf("--manifest and --input describe the encoder: give --encoder ENC.onnx too")
	}
	clf, err := models.LoadClassifier(clfPath)
	if err != nil {
		return userErrorf("%v", err)
	}
	var b []byte
	what := "head"
	if enc == "" {
		b, err = onnxexport.Head(clf, Version, c.Bool("float32"))
	} else {
		var m *models.Manifest
		if c.IsSet("manifest") {
			m, err = models.LoadManifest(c.String("manifest"))
		} else {
			m, _, err = models.ManifestFor(enc)
		}
		if err != nil {
			return userErrorf("%v", err)
		}
		model, rerr := os.ReadFile(enc)
		if rerr != nil {
			return userErrorf("--encoder: %v", rerr)
		}
		b, err = onnxexport.Fused(clf, model, m, onnxexport.FuseOptions{Input: onnxexport.Takes(input), Force: c.Bool("force"), Version: Version, Float32: c.Bool("float32")})
		if err != nil {
			err = fmt.Errorf("--encoder %s: %w", enc, err)
		}
		what = "encoder and head, input " + input
	}
	if err != nil {
		return userErrorf("%v", err)
	}
	if err := atomicfile.WriteBytes(out[0], b); err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"out": out[0], "bytes": len(b), "classes": len(clf.Classes), "fused": enc != "", "input": input})
	}
	return printf(c.App.Writer, "%s: %s, %d classes (%d bytes)\n", out[0], what, len(clf.Classes), len(b))
}
