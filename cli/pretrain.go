package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/augment"
	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/finetune"
	"github.com/dpfeat/dpfeat/internal/atomicfile"
	"github.com/dpfeat/dpfeat/internal/filehash"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/pretrain"
)

func pretrainCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "pretrain",
		Usage: "DP-RandP's Phase I: contrastive pretraining of a feature extractor, without privacy, on images that hold no private data (dpfeat synth makes them)",
		UsageText: "dpfeat pretrain --embed EMBED.onnx --vjp VJP.onnx --params INIT.safetensors --manifest ENC.json --data SRC\n" +
			"               --out PRETRAINED.safetensors [--steps N] [--batch B] [--lr η] [--augment SPEC] [--resume]\n\n" +
			"EMBED.onnx and VJP.onnx follow the pretraining contract (docs/commands.md; models/export_training_graph.py\n" +
			"--pretrain-layers K writes both): the feature extractor's embeddings, and the vector-Jacobian product that\n" +
			"turns the loss's gradient with respect to them into the parameters'. The loss is Wang and Isola's alignment\n" +
			"and uniformity over two augmented views of each image. INIT.safetensors holds the whole model's parameters\n" +
			"(the finetune training graph's): those of the graphs are trained, the others (the head) copied, so the\n" +
			"result is finetune's --params. Its metadata records the data, for finetune's guarantee.\n\n" +
			"Example:\n   dpfeat synth --size 28x28 --channels 1 --count 50000 --out synth\n" +
			"   dpfeat pretrain --embed cnn-embed.onnx --vjp cnn-vjp.onnx --params cnn-init.safetensors --manifest cnn.json \\\n" +
			"      --data synth --steps 2000 --out cnn-phase1.safetensors",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "embed", Usage: "embedding graph (ONNX, required)"},
			&ucli.StringFlag{Name: "vjp", Usage: "vector-Jacobian product graph (ONNX, required)"},
			&ucli.StringFlag{Name: "params", Usage: "the whole model's initial parameters (safetensors, required)"},
			&ucli.StringFlag{Name: "manifest", Usage: "manifest whose input section says how to preprocess images (required)"},
			&ucli.StringFlag{Name: "data", Usage: "images to pretrain on, held in memory (any source extract reads; labels are not used; required)"},
			&ucli.StringFlag{Name: "split", Usage: "split of --data"},
			&ucli.Int64Flag{Name: "limit", Usage: "use at most the first N images"},
			&ucli.IntFlag{Name: "steps", Value: 1000, Usage: "Adam steps"},
			&ucli.IntFlag{Name: "batch", Value: 256, Usage: "images per step (each as two views)"},
			&ucli.Float64Flag{Name: "lr", Value: 1e-3, Usage: "Adam's learning rate"},
			&ucli.StringFlag{Name: "augment", Value: "crop=4,flip", Usage: "how each image's two views are made: " + augment.Syntax},
			&ucli.Float64Flag{Name: "temperature", Value: 2, Usage: "t of the uniformity loss"},
			&ucli.Float64Flag{Name: "lambda", Value: 1, Usage: "weight of the uniformity loss"},
			&ucli.Uint64Flag{Name: "seed", Usage: "keys the batches and views (a run and its resume take the same)"},
			&ucli.StringFlag{Name: "out", Usage: "pretrained parameters to write (safetensors, required)"},
			&ucli.IntFlag{Name: "checkpoint-every", Value: 100, Usage: "write a checkpoint every N steps"},
			&ucli.BoolFlag{Name: "resume", Usage: "continue the run whose checkpoint is beside --out"},
			&ucli.BoolFlag{Name: "force", Usage: "replace --out and an old checkpoint"},
			overspendFlag(),
			&ucli.StringFlag{Name: "ledger", Usage: "budget ledger folder (default $DPFEAT_LEDGER, else ~/.local/share/dpfeat/ledger): data with a budget there is private, which Phase I must not read"},
			&ucli.StringFlag{Name: "ledger-name", Usage: "the data's ledger, when it was set with dpfeat budget init --name"},
			otherDataFlag(),
			&ucli.IntFlag{Name: "threads", Usage: "ONNX Runtime threads (0: its default)"},
			&ucli.StringFlag{Name: "device", Value: "cpu", Usage: "cpu, cuda, cuda:N or auto"},
			jsonFlag(),
		},
		Action: pretrainAction,
	}
}

// pretrainReport is what pretrain prints.
type pretrainReport struct {
	Out  string `json:"out"`
	Data string `json:"data"`
	// DataID is the identity of the images Phase I read
	// (features.DataIdentity): finetune refuses to fine-tune privately on
	// the data Phase I saw without privacy.
	DataID   string          `json:"data_id,omitempty"`
	Images   int             `json:"images"`
	Config   pretrain.Config `json:"config"`
	Loss     pretrain.Loss   `json:"final_loss"`
	Provider string          `json:"device"`
	Seconds  float64         `json:"seconds"`
}

// imagesIdentity is the data identity of a source's first limit images
// (all when limit ≤ 0).
func imagesIdentity(src string, opt features.DatasetOptions, limit int64) (string, error) {
	ds, err := features.OpenDataset(src, opt)
	if err != nil {
		return "", err
	}
	defer ds.Close()
	return features.DataIdentity(ds, 0, limit)
}

// MetaPretrain is the metadata key of pretrain's output that describes
// the run (a pretrainReport): finetune reads it for its guarantee.
const MetaPretrain = "dpfeat.pretrain"

func pretrainAction(c *ucli.Context) error {
	start := time.Now()
	req, cfg, err := pretrainFlags(c)
	if err != nil {
		return err
	}
	out := req["out"]
	ckpt := out + ".checkpoint"
	release, err := claimRun(c, out, ckpt, nil, "embed", "vjp", "params", "manifest", "data")
	if err != nil {
		return err
	}
	defer release()
	man, g, err := openPretrainGraphs(c, req)
	if err != nil {
		return err
	}
	defer g.Close()
	params, all, meta, err := finetune.ReadParams(req["params"], g.Params, true)
	if err != nil {
		return userErrorf("%v", err)
	}
	// Phase I reads its data without privacy: data that has a budget is
	// private, and its ledger records the run as spending it all (it is
	// refused without --force), as a non-private fit is.
	budget, err := findLedger(c, req["data"])
	if err != nil {
		return err
	}
	if err := spendBudget(c, budget, req["data"], "pretrain", accounting.NonPrivate("DP-RandP's Phase I, without privacy"), out); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "dpfeat: loading %s\n", req["data"])
	dopt := features.DatasetOptions{Split: c.String("split")}
	images, _, _, err := features.ReadImages(req["data"], dopt, c.Int64("limit"), false)
	if err != nil {
		return userErrorf("--data: %v", err)
	}
	dataID, err := imagesIdentity(req["data"], dopt, c.Int64("limit"))
	if err != nil {
		return userErrorf("--data: %v", err)
	}
	settings, err := pretrainSettings(req, len(images), cfg)
	if err != nil {
		return err
	}
	prog := newFitProgress(c.App.ErrWriter)
	run := &pretrain.Run{Graphs: g, Images: images, Prep: encode.NewPreprocessor(man.Input), Config: cfg, Checkpoint: ckpt,
		Every: c.Int("checkpoint-every"), Settings: settings, Progress: lossProgress(prog)}
	trained, err := run.Drive(c.Context, params, c.Bool("resume"))
	prog.done()
	if err != nil {
		return userErrorf("%v", err)
	}
	rep := pretrainReport{Out: out, Data: req["data"], DataID: dataID, Images: len(images), Config: cfg, Loss: run.Last, Provider: g.Provider}
	for i, p := range g.Params {
		t := all[p.Name]
		t.Data = trained[i]
		all[p.Name] = t
	}
	if err := writePretrained(out, all, meta, rep); err != nil {
		return err
	}
	os.Remove(ckpt)
	rep.Seconds = time.Since(start).Seconds()
	if c.Bool("json") {
		return writeJSON(c.App.Writer, rep)
	}
	return printf(c.App.Writer, "wrote %s: %d steps of %d images on %s (%d images), final loss %.4f (align %.4f, uniform %.4f), %.1f s\n",
		out, cfg.Steps, cfg.Batch, req["data"], len(images), rep.Loss.Total, rep.Loss.Align, rep.Loss.Uniform, rep.Seconds)
}

// openPretrainGraphs opens the encoder's manifest and Phase I's graphs,
// checking that they agree on the image shape.
func openPretrainGraphs(c *ucli.Context, req map[string]string) (*models.Manifest, *pretrain.Graphs, error) {
	man, err := models.LoadManifest(req["manifest"])
	if err != nil {
		return nil, nil, userErrorf("%v", err)
	}
	dev, err := encode.ParseDevice(c.String("device"))
	if err != nil {
		return nil, nil, userErrorf("%v", err)
	}
	g, err := pretrain.Open(req["embed"], req["vjp"], finetune.GraphOptions{Threads: c.Int("threads"), Device: dev})
	if err != nil {
		return nil, nil, userErrorf("%v", err)
	}
	if g.Note != "" {
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: %s\n", g.Note)
	}
	if err := checkImageShape(req["embed"], g.ImageShape, req["manifest"], man.Input); err != nil {
		g.Close()
		return nil, nil, err
	}
	return man, g, nil
}

// pretrainFlags reads pretrain's required paths and its configuration.
func pretrainFlags(c *ucli.Context) (map[string]string, pretrain.Config, error) {
	req := map[string]string{}
	for _, name := range []string{"embed", "vjp", "params", "manifest", "data", "out"} {
		v, err := requiredString(c, name)
		if err != nil {
			return nil, pretrain.Config{}, err
		}
		req[name] = v
	}
	cfg := pretrain.Config{Steps: c.Int("steps"), Batch: c.Int("batch"), LR: c.Float64("lr"), Temperature: c.Float64("temperature"),
		Lambda: c.Float64("lambda"), Augment: c.String("augment"), Seed: c.Uint64("seed")}
	if err := cfg.Check(); err != nil {
		return nil, cfg, userErrorf("pretrain: %v", err)
	}
	if c.Int("checkpoint-every") < 1 || c.Int64("limit") < 0 {
		return nil, cfg, userErrorf("--checkpoint-every must be at least 1 and --limit at least 0")
	}
	return req, cfg, nil
}

// lossProgress prints each step with the mean loss of the last 20 steps.
func lossProgress(prog *fitProgress) func(step, steps int, l pretrain.Loss) {
	var window []float64
	return func(step, steps int, l pretrain.Loss) {
		if window = append(window, l.Total); len(window) > 20 {
			window = window[1:]
		}
		var mean float64
		for _, v := range window {
			mean += v / float64(len(window))
		}
		prog.line("pretrain step %d/%d, loss %.4f (mean of the last %d steps)", step, steps, mean, len(window))
	}
}

// writePretrained writes the pretrained parameters (all, trained ones
// included) with the run's report and the initial file's metadata.
func writePretrained(out string, all map[string]models.Tensor, meta map[string]string, rep pretrainReport) error {
	rj, _ := json.Marshal(rep)
	md := map[string]string{"format": "dpfeat.pretrain.v1", "dpfeat.version": Version, MetaPretrain: string(rj),
		"privacy": fmt.Sprintf("not private: pretrained by dpfeat pretrain on %s (%d images), which must hold no private data", rep.Data, rep.Images)}
	for k, v := range meta {
		if _, ok := md[k]; !ok && k != "privacy" {
			md["init."+k] = v
		}
	}
	var ts []models.Tensor
	for name, t := range all {
		t.Name = name
		ts = append(ts, t)
	}
	b, err := models.EncodeSafetensors(ts, md)
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(out, b)
}

// pretrainSettings are what a resumed run must repeat: the graphs' and
// initial parameters' contents, the data and the hyperparameters.
func pretrainSettings(req map[string]string, images int, cfg pretrain.Config) (string, error) {
	var sums []string
	for _, f := range []string{"embed", "vjp", "params"} {
		s, err := filehash.SHA256(req[f])
		if err != nil {
			return "", userErrorf("%v", err)
		}
		sums = append(sums, s)
	}
	return pretrain.Settings(sums[0], sums[1]+" params="+sums[2], req["data"], images, cfg), nil
}
