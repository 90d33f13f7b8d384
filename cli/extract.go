package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/fspath"
	"github.com/dpfeat/dpfeat/internal/objstore"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/runner/spec"
	"github.com/dpfeat/dpfeat/synthbasis"
)

func extractCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "extract",
		Usage: "run a frozen ONNX encoder over an image dataset and write a feature file",
		UsageText: "dpfeat extract --encoder ENC.onnx [--manifest ENC.json | --preset NAME] --data SRC --out FEATS.arrow\n" +
			"               [--split train|test] [--encoder-batch N] [--threads N] [--device cpu|cuda[:N]|auto] [--limit N]\n" +
			"               [--resume] [--skip-bad] [--json]\n\n" +
			"SRC is an image folder (root/<class>/*.png|jpg|gif|bmp|tif|webp; links inside it followed), a Hugging Face datasets .arrow file or folder,\n" +
			"CIFAR-10/100 .bin batches or folder, or an IDX *-images-idx3-ubyte[.gz] file or folder.\n" +
			"The manifest (ENC.json beside ENC.onnx by default) says how to preprocess images and read features.\n\n" +
			"Example:\n   dpfeat extract --encoder fmnist-resnet.onnx --data /usr/share/datasets/fashion-mnist --split test --out test.arrow",
		Flags: append(append(append(encoderFlags(true), viewFlags("one row each, all naming the image (a multi-view file)")...), runnerFlags("extract shards of the source in parallel")...),
			&ucli.Int64Flag{Name: "shard-rows", Usage: "with --runner: images per shard (rounded up to whole --encoder-batch; default: four shards per worker slot)"},
			&ucli.StringFlag{Name: "classes", Usage: "the class list, as a,b,c or @FILE (one per line): for an image folder exactly these classes in this order (a class without images is still a class; a folder not listed is an error); for other formats new names for its classes, in order"},
			&ucli.StringFlag{Name: "out", Usage: "the feature file to write (required)"},
			&ucli.Int64Flag{Name: "offset", Usage: "skip the first N images of the dataset"},
			&ucli.Int64Flag{Name: "limit", Usage: "encode at most N images (after --offset)"},
			&ucli.BoolFlag{Name: "resume", Usage: "continue an interrupted extraction into the same --out"},
			&ucli.BoolFlag{Name: "restart", Usage: "discard an interrupted or damaged extraction into --out and start over"},
			&ucli.Int64Flag{Name: "synthetic-basis", Value: synthbasis.DefaultCount, Usage: "when the encoder's manifest names no basis: run the encoder over N random-process images (no data; made once per encoder into $" + synthbasis.CacheEnv + "/basis or the user cache) and record their features as the encoder's basis, which fit --method auto uses at small n·μ; 0: none"},
			forceFlag(),
			jsonFlag(),
		),
		Action: extractAction,
	}
}

// encoderFlags are the flags that run an encoder over images: extract's,
// and predict's when it predicts from images (required says whether
// --encoder and --data are).
func encoderFlags(required bool) []ucli.Flag {
	req := ""
	if required {
		req = " (required)"
	}
	return []ucli.Flag{
		&ucli.StringFlag{Name: "encoder", Usage: "the encoder, exported to ONNX" + req},
		&ucli.StringFlag{Name: "manifest", Usage: "the encoder's manifest (default: the .json beside the model)"},
		&ucli.StringFlag{Name: "preset", Usage: "use a built-in manifest: " + strings.Join(models.PresetNames(), ", ")},
		&ucli.StringFlag{Name: "data", Usage: "the image dataset" + req},
		&ucli.StringFlag{Name: "split", Usage: "which split of a dataset with several (train, test, …)"},
		&ucli.IntFlag{Name: "encoder-batch", Value: 64, Usage: "images per encoder call"},
		&ucli.IntFlag{Name: "threads", Value: runtime.NumCPU(), Usage: "ONNX Runtime intra-op threads"},
		&ucli.IntFlag{Name: "workers", Value: max(1, runtime.NumCPU()/4), Usage: "goroutines decoding and preprocessing images beside inference"},
		&ucli.StringFlag{Name: "device", Value: "cpu", Usage: "cpu, cuda, cuda:N, or auto (CUDA if available, else CPU)"},
		&ucli.BoolFlag{Name: "tf32", Value: true, Usage: "on CUDA, let float32 matrix products use TF32 (ONNX Runtime's default: features then differ from the CPU's by about 1e-3 relative); --tf32=false computes in exact float32, more slowly, for runs compared across devices"},
		&ucli.BoolFlag{Name: "skip-bad", Usage: "skip images that do not decode (they are counted and listed)"},
		&ucli.BoolFlag{Name: "quiet", Usage: "no progress bar"},
	}
}

// extractReport is the --json output of extract.
type extractReport struct {
	encode.ExtractResult
	Model          string `json:"model"`
	Encoder        string `json:"encoder"`
	EncoderSHA256  string `json:"encoder_sha256"`
	Source         string `json:"source"`
	Classes        int    `json:"classes"`
	Device         string `json:"device"`
	Runtime        string `json:"onnxruntime"`
	Batch          int    `json:"batch"`
	Threads        int    `json:"threads"`
	DeviceFallback string `json:"device_note,omitempty"`
	// Basis is the encoder's basis features the file records (the
	// manifest's, or the synthetic one), "" for none.
	Basis string `json:"basis,omitempty"`
	// Runner and Shards, with --runner, say what ran the extraction and
	// how many shard files the manifest lists; ShardsMade how many of them
	// this run extracted (the others were an interrupted run's, --resume).
	Runner     string `json:"runner,omitempty"`
	Shards     int    `json:"shards,omitempty"`
	ShardsMade int    `json:"shards_made,omitempty"`
	// SkippedFiles are an image folder's files that were not read, and
	// why; EmptyClasses its classes left without images.
	SkippedFiles []features.SkippedFile `json:"skipped_files"`
	EmptyClasses []string               `json:"empty_classes"`
}

// folderReport is what an image folder says of the files it did not read.
type folderReport interface {
	SkippedFiles() []features.SkippedFile
	EmptyClasses() []string
}

// reportFolder prints, once, the files of an image folder that are not
// read (grouped by why, a few names each) and the classes left empty, and
// keeps both for the JSON report.
func reportFolder(c *ucli.Context, ds features.Dataset, rep *extractReport) {
	// Empty, not null, in the JSON of any source.
	rep.SkippedFiles, rep.EmptyClasses = []features.SkippedFile{}, []string{}
	f, ok := ds.(folderReport)
	if !ok {
		return
	}
	rep.SkippedFiles = append(rep.SkippedFiles, f.SkippedFiles()...)
	rep.EmptyClasses = append(rep.EmptyClasses, f.EmptyClasses()...)
	if n := len(rep.SkippedFiles); n > 0 {
		var order []string
		by := map[string][]string{}
		for _, s := range rep.SkippedFiles {
			if by[s.Why] == nil {
				order = append(order, s.Why)
			}
			by[s.Why] = append(by[s.Why], s.Path)
		}
		var parts []string
		for _, why := range order {
			names := by[why]
			more := ""
			if len(names) > 5 {
				names, more = names[:5], fmt.Sprintf(" and %d more", len(by[why])-5)
			}
			parts = append(parts, fmt.Sprintf("%d %s (%s%s)", len(by[why]), why, strings.Join(names, ", "), more))
		}
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: note: %d files of the folder are not read: %s\n", n, strings.Join(parts, "; "))
	}
	if len(rep.EmptyClasses) > 0 {
		what := "class " + rep.EmptyClasses[0] + ": no image"
		if len(rep.EmptyClasses) > 1 {
			what = "classes " + strings.Join(rep.EmptyClasses, ", ") + ": no image in any"
		}
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: WARNING: %s dpfeat reads, so no examples (a class without examples stays in the class list)\n", what)
	}
}

// extractModel reads the encoder's manifest, checks the model file against
// it and names the encoder (the manifest's name, else the file's).
func extractModel(c *ucli.Context, modelPath string) (m *models.Manifest, manifestPath, sum, name string, err error) {
	if m, manifestPath, err = loadManifest(c, modelPath); err != nil {
		return nil, "", "", "", err
	}
	if sum, err = m.CheckFile(modelPath); err != nil {
		return nil, "", "", "", userErrorf("%v", err)
	}
	name = m.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(modelPath), filepath.Ext(modelPath))
	}
	return m, manifestPath, sum, name, nil
}

func extractAction(c *ucli.Context) error {
	modelPath, err := requiredString(c, "encoder")
	if err != nil {
		return err
	}
	data, err := requiredString(c, "data")
	if err != nil {
		return err
	}
	out, err := requiredString(c, "out")
	if err != nil {
		return err
	}
	if err := guardOutputs(flagPaths(c, "out"), flagPaths(c, "encoder", "manifest", "data")); err != nil {
		return err
	}
	ro, err := runnerFrom(c)
	if err != nil {
		return err
	}
	if ro != nil {
		if err := checkExtension("out", out, ".json"); err != nil {
			return userErrorf("%v (with --runner, --out is the shard manifest; the shards go beside it)", err)
		}
	} else if err := checkExtension("out", out, ".arrow"); err != nil {
		return userErrorf("%v (a feature file; dpfeat convert writes the other formats)", err)
	}
	if ro != nil {
		if err := guardShards(c, out); err != nil {
			return err
		}
	}
	switch {
	case objstore.IsRemote(out) && ro == nil:
		return userErrorf("--out %s: one machine writes a local feature file; with --runner (prism runs in this process) extraction writes its shards and manifest to object storage", out)
	case objstore.IsRemote(out) && !c.Bool("resume"):
		if err := refuseExistingObject(c, "out", out); err != nil {
			return err
		}
	case objstore.IsRemote(out):
		if err := objstore.CheckName(out); err != nil {
			return userErrorf("--out %v", err)
		}
	case !c.Bool("resume"):
		if err := refuseExisting(c, "out", out); err != nil {
			return err
		}
	default:
		if err := checkOutputFolder("out", out); err != nil {
			return err
		}
	}
	classes, err := classList(c)
	if err != nil {
		return err
	}
	if _, _, err := viewsFrom(c); err != nil {
		return err
	}
	rep, err := extractTo(c, modelPath, data, out, features.DatasetOptions{Split: c.String("split"), Classes: classes}, true)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, rep)
	}
	return printExtract(c, out, rep)
}

// guardShards checks the folders a distributed extraction writes beside
// its manifest (spec.ShardDir, spec.WorkDir): no input may be one of
// them or lie inside one (--data photos.shards --out photos.json once
// deleted the images). Nothing is removed here: the runner replaces an
// earlier run's shards (with --force) only once the new ones are
// finished.
func guardShards(c *ucli.Context, out string) error {
	for _, dir := range []string{spec.ShardDir(out), spec.WorkDir(out)} {
		for _, in := range flagPaths(c, "encoder", "manifest", "data", "mix-with") {
			if in[1] == "" {
				continue
			}
			if sameFile(in[1], dir) || within(in[1], dir) {
				return userErrorf("--%s %s is inside %s, where --out %s puts its shards; write the manifest elsewhere", in[0], in[1], dir, out)
			}
		}
	}
	return nil
}

// extractTo runs the encoder (--encoder) over the dataset data into the
// feature file out, with the encoder flags (encoderFlags) and, where the
// command has them, extract's own; identity says whether to hash the
// source examples (the data's identity, for budget ledgers).
func extractTo(c *ucli.Context, modelPath, data, out string, dopt features.DatasetOptions, identity bool) (extractReport, error) {
	var rep extractReport
	if err := extractFlags(c, out); err != nil {
		return rep, err
	}
	dev, err := encode.ParseDevice(c.String("device"))
	if err != nil {
		return rep, userErrorf("%v", err)
	}
	dev.ExactFloat32 = !c.Bool("tf32")
	m, manifestPath, sum, name, err := extractModel(c, modelPath)
	if err != nil {
		return rep, err
	}
	basis, basisSHA, err := encoderBasis(c, m, manifestPath, sum, out)
	if err != nil {
		return rep, err
	}
	ds, err := features.OpenDataset(data, dopt)
	if err != nil {
		return rep, err
	}
	defer ds.Close()
	sess, err := encode.OpenSession(modelPath, m, encode.SessionOptions{Threads: c.Int("threads"), Device: dev})
	if err != nil {
		return rep, err
	}
	defer sess.Close()
	if fb := sess.FixedBatch(); fb > 0 && fb != c.Int("encoder-batch") {
		return rep, userErrorf("--encoder %s takes batches of exactly %d images (its input's first axis is fixed): pass --encoder-batch %d, or export it with a dynamic batch axis", modelPath, fb, fb)
	}
	if sess.Note() != "" {
		fmt.Fprintln(c.App.ErrWriter, "dpfeat: "+sess.Note())
	}
	opt, source, err := extractOptions(c, m, sum, name, ds, data, dopt, identity)
	if err != nil {
		return rep, err
	}
	opt.Meta.Basis, opt.Meta.BasisSHA256 = basis, basisSHA
	if basis != "" {
		opt.Meta.BasisSource = "the encoder's manifest"
		if m.Basis.Source != "" {
			opt.Meta.BasisSource += ": " + m.Basis.Source
		}
	}
	if n := c.Int64("synthetic-basis"); basis == "" && m.Basis == nil && n > 0 {
		if opt.Meta.Basis, opt.Meta.BasisSHA256, opt.Meta.BasisSource, err = syntheticBasis(c, m, sess, sum, name, n); err != nil {
			return rep, err
		}
	}
	if !c.Bool("quiet") && !c.Bool("json") {
		opt.Progress = c.App.ErrWriter
	}
	rep = extractReport{Model: modelPath, Encoder: name, EncoderSHA256: sum, Source: source,
		Classes: len(ds.Classes()), Device: sess.Provider(), Runtime: encode.RuntimeVersion(), Batch: c.Int("encoder-batch"),
		Threads: c.Int("threads"), DeviceFallback: sess.Note(), Basis: opt.Meta.Basis}
	reportFolder(c, ds, &rep)
	if ro, err := runnerFrom(c); err != nil || ro != nil {
		if err != nil {
			return rep, err
		}
		return rep, extractRemote(c, *ro, spec.ExtractJob{Model: modelPath, Manifest: *m, Threads: c.Int("threads"), Device: c.String("device"), ExactFloat32: !c.Bool("tf32"), Data: data,
			Dataset: dopt, Offset: c.Int64("offset"), Limit: c.Int64("limit"), ShardRows: c.Int64("shard-rows"), Extract: opt, Out: out,
			Workers: ro.Workers, Replace: c.Bool("force")}, &rep)
	}
	res, err := encode.Extract(c.Context, ds, sess, encode.NewPreprocessor(m.Input), out, opt)
	if err != nil {
		if errors.Is(err, encode.ErrInterrupted) {
			return rep, userErrorf("extract: %v", err)
		}
		return rep, err
	}
	rep.ExtractResult = res
	return rep, nil
}

// loadManifest resolves --manifest, --preset, or the manifest beside the
// model, and returns it with its path ("" for a preset).
func loadManifest(c *ucli.Context, modelPath string) (*models.Manifest, string, error) {
	switch {
	case c.IsSet("manifest") && c.IsSet("preset"):
		return nil, "", userErrorf("give --manifest or --preset, not both")
	case c.IsSet("manifest"):
		m, err := models.LoadManifest(c.String("manifest"))
		return m, c.String("manifest"), err
	case c.IsSet("preset"):
		m, err := models.Preset(c.String("preset"))
		if err != nil {
			return nil, "", userErrorf("--preset: %v", err)
		}
		return m, "", nil
	}
	return models.ManifestFor(modelPath)
}

// encoderBasis resolves the public basis features the manifest names
// (models.Basis) into what the features record (features.EncoderBasis):
// nothing when it names none, when this run makes the basis itself, or
// when the file is not there yet (a note says auto will not find it).
func encoderBasis(c *ucli.Context, m *models.Manifest, manifestPath, sum, out string) (path, hash string, err error) {
	p := m.BasisPath(manifestPath)
	if p == "" || fspath.Resolve(p) == fspath.Resolve(out) {
		return "", "", nil
	}
	path, hash, err = features.EncoderBasis(p, m.Basis.SHA256, sum)
	if errors.Is(err, features.ErrNoBasis) {
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: note: the encoder's manifest %s names the basis %s, which is not there: these features do not record it, and fit --method auto will not use it\n", manifestPath, p)
		return "", "", nil
	}
	if err != nil {
		return "", "", userErrorf("manifest %s: %v", manifestPath, err)
	}
	return path, hash, nil
}

// syntheticBasis makes (once per encoder: package synthbasis) or finds
// the features of n random-process images through the encoder, and
// returns what the features record of them. Where it cannot (no cache
// folder, one that cannot be written, another file at its path) a note
// says so and the features record none: the extraction goes on. Only an
// interruption stops it.
func syntheticBasis(c *ucli.Context, m *models.Manifest, sess *encode.Session, sum, name string, n int64) (path, hash, source string, err error) {
	set := synthbasis.Settings{Count: n}
	dir, err := synthbasis.Dir()
	if err == nil {
		r := synthbasis.Request{Dir: dir, Settings: set, Input: m.Input, Encoder: sess, Preprocessor: encode.NewPreprocessor(m.Input),
			EncoderSHA256: sum, EncoderName: name, Version: Version, Batch: c.Int("encoder-batch")}
		if !c.Bool("quiet") && !c.Bool("json") {
			r.Progress = c.App.ErrWriter
		}
		r.Making = func(path string) {
			fmt.Fprintf(c.App.ErrWriter, "dpfeat: the encoder's synthetic basis: %d random-process images (no data) → %s, made once for this encoder (--synthetic-basis 0: none)\n", n, path)
		}
		path, _, err = synthbasis.Ensure(c.Context, r)
	}
	if errors.Is(err, encode.ErrInterrupted) {
		return "", "", "", userErrorf("extract: interrupted while making the encoder's synthetic basis %s: the images it encoded are kept, and the next extract with this encoder continues it", synthbasis.Path(dir, sum, m.Input, set))
	}
	if err == nil {
		path, hash, err = features.EncoderBasis(path, "", sum)
	}
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: note: no synthetic basis: %v; these features record none, and fit --method auto will not use one (--synthetic-basis 0: do not try)\n", err)
		return "", "", "", nil
	}
	return path, hash, set.Source(m.Input), nil
}

// extractFlags checks --out and the numeric flags.
func extractFlags(c *ucli.Context, out string) error {
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return userErrorf("--out %s is a directory; expected a file name", out)
	}
	for _, n := range []string{"encoder-batch", "threads", "workers"} {
		if c.Int(n) < 1 {
			return userErrorf("--%s must be at least 1, got %d", n, c.Int(n))
		}
	}
	for _, n := range []string{"limit", "offset", "shard-rows", "synthetic-basis"} {
		if c.Int64(n) < 0 {
			return userErrorf("--%s must be ≥ 0, got %d", n, c.Int64(n))
		}
	}
	return nil
}

// dataIdentity hashes the source examples: the data's identity keys its
// budget ledger, whatever encoder reads it (one pass first; the files are
// then in the page cache for the extraction's pass).
func dataIdentity(c *ucli.Context, data string, dopt features.DatasetOptions) (string, error) {
	ds, err := features.OpenDataset(data, dopt)
	if err != nil {
		return "", err
	}
	defer ds.Close()
	if !c.Bool("quiet") {
		fmt.Fprintln(c.App.ErrWriter, "dpfeat: hashing the source examples (the data's identity, for budget ledgers)")
	}
	return features.DataIdentity(ds, c.Int64("offset"), c.Int64("limit"))
}

// sourceText describes what was read, for dpfeat.source.
func sourceText(c *ucli.Context, ds features.Dataset) string {
	source := ds.Source()
	if s := c.String("split"); s != "" {
		source += " (split " + s + ")"
	}
	if o, l := c.Int64("offset"), c.Int64("limit"); o > 0 || l > 0 {
		source += fmt.Sprintf(" rows %d..", o)
		if l > 0 {
			source += strconv.FormatInt(o+l-1, 10)
		}
	}
	return source
}

// printExtract prints the one-line summary of an extraction.
func printExtract(c *ucli.Context, out string, rep extractReport) error {
	res := rep.ExtractResult
	msg := fmt.Sprintf("%s: %d rows × %d features from %s with %s on %s in %.1f s", out, res.Rows, res.Dim, rep.Source, rep.Encoder, rep.Device, res.Seconds)
	if rep.Runner != "" {
		msg += fmt.Sprintf(" (%d shards, runner %s)", rep.Shards, rep.Runner)
	} else {
		msg += fmt.Sprintf(" (%.0f images/s)", res.ImagesPerSecond)
	}
	if res.Resumed > 0 {
		msg += fmt.Sprintf("; %d rows resumed from the interrupted run", res.Resumed)
	}
	if res.Skipped > 0 {
		msg += fmt.Sprintf("; %d images skipped (do not decode): %s", res.Skipped, strings.Join(res.SkippedIDs, ", "))
	}
	return printf(c.App.Writer, "%s\n", msg)
}

// extractRemote writes the shards of job on the runner (each worker opens
// its own sessions) and fills rep.
func extractRemote(c *ucli.Context, ro spec.Options, job spec.ExtractJob, rep *extractReport) error {
	job.Extract.Offset, job.Extract.Limit = 0, 0
	t0 := time.Now()
	res, err := extractOnRunner(c.Context, job, ro)
	if err != nil {
		return userErrorf("extract --runner %s: %v", ro.Name(), err)
	}
	if res.Note != "" {
		fmt.Fprintln(c.App.ErrWriter, "dpfeat: "+res.Note)
	}
	rep.ExtractResult = encode.ExtractResult{Out: job.Out, Rows: res.Rows, Dim: res.Dim, Seconds: time.Since(t0).Seconds()}
	rep.Runner, rep.Shards, rep.ShardsMade = res.Runner, res.Shards, res.Made
	return nil
}

// extractOptions are what encode.Extract is asked: the file's metadata
// (the source examples' identity when identity is set), views and the
// run's identity for --resume; and the source's description.
func extractOptions(c *ucli.Context, m *models.Manifest, sum, name string, ds features.Dataset, data string, dopt features.DatasetOptions, identity bool) (opt encode.ExtractOptions, source string, err error) {
	dataID := ""
	if identity {
		if dataID, err = dataIdentity(c, data, dopt); err != nil {
			return opt, "", err
		}
	}
	source = sourceText(c, ds)
	views, aug, err := viewsFrom(c)
	if err != nil {
		return opt, "", err
	}
	var public []features.Pixels
	var publicLabels []int32
	if views != nil {
		if public, publicLabels, err = mixWith(c, views, ds.Classes()); err != nil {
			return opt, "", err
		}
	}
	viewsJSON, _ := json.Marshal(views)
	manifestJSON, _ := json.Marshal(m)
	absData, _ := filepath.Abs(data)
	opt = encode.ExtractOptions{
		Batch: c.Int("encoder-batch"), Workers: c.Int("workers"), Limit: c.Int64("limit"), Offset: c.Int64("offset"),
		SkipBad: c.Bool("skip-bad"), Resume: c.Bool("resume"), Restart: c.Bool("restart"),
		Meta:    features.Metadata{Version: Version, EncoderSHA256: sum, EncoderName: name, Classes: ds.Classes(), Source: source, DataID: dataID, Views: views, IDs: features.IDsOfExamples},
		Augment: aug, Public: public, PublicLabels: publicLabels,
		Identity: map[string]string{
			"model sha256": sum, "manifest": string(manifestJSON), "data": absData, "split": c.String("split"),
			"limit": strconv.FormatInt(c.Int64("limit"), 10), "offset": strconv.FormatInt(c.Int64("offset"), 10), "batch": strconv.Itoa(c.Int("encoder-batch")),
			"skip-bad": strconv.FormatBool(c.Bool("skip-bad")), "dpfeat version": Version, "views": string(viewsJSON),
			features.IdentityData: dataID,
		},
	}
	if !c.Bool("tf32") {
		opt.Identity["tf32"] = "false" // other features on CUDA (absent when on: older runs resume)
	}
	return opt, source, nil
}
