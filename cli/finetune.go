package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/finetune"
	"github.com/dpfeat/dpfeat/internal/atomicfile"
	"github.com/dpfeat/dpfeat/internal/filehash"
	"github.com/dpfeat/dpfeat/internal/outlock"
	"github.com/dpfeat/dpfeat/ledger"
	"github.com/dpfeat/dpfeat/models"
)

func finetuneCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "finetune",
		Usage: "DP-RandP's private phases through a training graph: the head (Phase II), then all parameters (Phase III)",
		UsageText: "dpfeat finetune --graph TRAIN.onnx --params INIT.safetensors --manifest ENC.json --data SRC --head NAME[,NAME…]\n" +
			"                --epsilon E --delta D --out TRAINED.safetensors [--phase2-share S] [--test SRC] [--resume]\n\n" +
			"TRAIN.onnx follows the training-graph contract (docs/commands.md; models/export_training_graph.py makes one):\n" +
			"parameters, images and labels in, per-example gradients grad.P and losses out. Phase II trains only\n" +
			"the --head parameters with full-batch DP-SGD, Phase III all of them with Poisson-sampled DP-SGD;\n" +
			"Phase II alone gets --phase2-share of ε (default: DP-RandP's strategy, all of a small ε), and the two\n" +
			"compose, by the accountant, to (--epsilon, --delta). A checkpoint beside --out lets an interrupted\n" +
			"run continue with --resume. The result holds the trained parameters, named as the graph's inputs.\n\n" +
			"Example:\n   dpfeat finetune --graph cnn-train.onnx --params cnn.safetensors --manifest cnn.json \\\n" +
			"      --data /usr/share/datasets/fashion-mnist --offset 30000 --limit 30000 --head 6.weight,6.bias \\\n" +
			"      --epsilon 8 --delta 1e-5 --out cnn-dp.safetensors",
		Flags: append([]ucli.Flag{
			&ucli.StringFlag{Name: "graph", Usage: "training graph (ONNX, required)"},
			&ucli.StringFlag{Name: "params", Usage: "initial parameters, named as the graph's inputs (safetensors, required)"},
			&ucli.StringFlag{Name: "manifest", Usage: "manifest whose input section says how to preprocess images (required)"},
			&ucli.StringFlag{Name: "data", Usage: "training images (any source extract reads, required)"},
			&ucli.StringFlag{Name: "split", Usage: "split of --data (train, test, …)"},
			&ucli.Int64Flag{Name: "offset", Usage: "skip the first N examples of --data"},
			&ucli.Int64Flag{Name: "limit", Usage: "use at most N examples (after --offset)"},
			&ucli.StringFlag{Name: "head", Usage: "comma-separated parameters Phase II trains (required unless --phase2-share 0)"},
			&ucli.StringFlag{Name: "epsilon", Usage: "total privacy budget ε of both phases (required)"},
			&ucli.Float64Flag{Name: "delta", Usage: "δ, well below 1/n (required)"},
			&ucli.StringFlag{Name: "out", Usage: "trained parameters to write (safetensors, required)"},
			&ucli.StringFlag{Name: "phase2-share", Usage: "the part of ε Phase II alone meets, in [0, 1] (default: 1 up to ε = 0.25, then 0.5/√ε, at least 0.1)"},
			&ucli.IntFlag{Name: "phase2-steps", Value: 100, Usage: "Phase II steps (full batch; DP-RandP uses about 100)"},
			&ucli.Float64Flag{Name: "phase2-lr", Value: 2, Usage: "Phase II learning rate"},
			&ucli.IntFlag{Name: "phase3-steps", Value: 200, Usage: "Phase III steps"},
			&ucli.Float64Flag{Name: "batch", Value: 256, Usage: "Phase III expected (Poisson) batch size"},
			&ucli.Float64Flag{Name: "lr", Value: 0.5, Usage: "Phase III learning rate"},
			&ucli.Float64Flag{Name: "clip", Value: 1, Usage: "per-example gradient clipping norm (both phases)"},
			&ucli.Float64Flag{Name: "momentum", Value: 0.9, Usage: "SGD momentum (both phases)"},
			&ucli.StringFlag{Name: "forward", Usage: "the forward graph (parameters as inputs, logits out) to bake the trained parameters into"},
			&ucli.StringFlag{Name: "export", Usage: "with --forward: write the trained model as one standalone ONNX file (images in, logits out; privacy in its metadata)"},
			&ucli.StringFlag{Name: "test", Usage: "labelled images to report test accuracy on"},
			&ucli.StringFlag{Name: "test-split", Value: "test", Usage: "split of --test"},
			&ucli.Int64Flag{Name: "test-limit", Usage: "use at most N test images"},
			&ucli.IntFlag{Name: "checkpoint-every", Value: 20, Usage: "write a checkpoint every N steps"},
			&ucli.BoolFlag{Name: "resume", Usage: "continue the run whose checkpoint is beside --out"},
			&ucli.BoolFlag{Name: "force", Usage: "replace --out and an old checkpoint"},
			overspendFlag(),
			&ucli.StringFlag{Name: "ledger", Usage: "budget ledger folder (default $DPFEAT_LEDGER, else ~/.local/share/dpfeat/ledger)"},
			&ucli.StringFlag{Name: "ledger-name", Usage: "the data's ledger (dpfeat budget init --name): the run is recorded there, and refused past its budget"},
			otherDataFlag(),
			&ucli.IntFlag{Name: "threads", Usage: "ONNX Runtime threads (0: its default)"},
			&ucli.StringFlag{Name: "device", Value: "cpu", Usage: "cpu, cuda, cuda:N or auto (CUDA when the runtime has it, else the CPU, saying so)"},
			&ucli.StringFlag{Name: "seed", Usage: "seed the noise and sampling (for reproduction only: the result is then not private)"},
			jsonFlag(),
		}, viewFlags("made afresh for every sampled example at every Phase III step, their gradients averaged before the clip")...),
		Action: finetuneAction,
	}
}

type finetuneReport struct {
	Epsilon      accounting.Float `json:"epsilon"`
	Delta        float64          `json:"delta"`
	Accountant   string           `json:"accountant"`
	Phase2       finetune.Phase   `json:"phase2"`
	Phase3       finetune.Phase   `json:"phase3"`
	Share        float64          `json:"phase2_share"`
	TrainRows    int              `json:"train_rows"`
	TestAccuracy *float64         `json:"test_accuracy"`
	Seconds      float64          `json:"seconds"`
	// StepSeconds is the mean wall time per step of Phases II and III.
	StepSeconds [2]float64           `json:"step_seconds"`
	Out         string               `json:"out"`
	Export      string               `json:"export,omitempty"`
	Provider    string               `json:"provider"`
	Guarantee   accounting.Guarantee `json:"guarantee"`
}

// claimRun checks that no output — out, its checkpoint ckpt and the
// extra ones — replaces an input (the files of the flags named) or an
// existing file (finetuneOutputsFree), and locks out: one run owns it and
// its checkpoint at a time. finetune and pretrain claim their outputs
// here.
func claimRun(c *ucli.Context, out, ckpt string, extra [][2]string, inputs ...string) (release func(), err error) {
	outputs := append([][2]string{{"out", out}, {"out (its checkpoint)", ckpt}}, extra...)
	if err := guardOutputs(outputs, flagPaths(c, inputs...)); err != nil {
		return nil, err
	}
	if release, err = outlock.Lock(out); err != nil {
		return nil, userErrorf("%v", err)
	}
	if err := finetuneOutputsFree(c, ckpt); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// finetuneData loads the images to fine-tune on and, with --views, sets
// Phase III's views; unit says how the examples' views are counted.
func finetuneData(c *ucli.Context, path string, in models.Input, p3 *finetune.Phase) (finetune.Data, []string, string, error) {
	fmt.Fprintf(c.App.ErrWriter, "dpfeat: loading %s\n", path)
	views, spec, err := viewsFrom(c)
	if err != nil {
		return finetune.Data{}, nil, "", err
	}
	data, classes, err := finetune.LoadImages(path, features.DatasetOptions{Split: c.String("split")}, in, c.Int64("offset"), c.Int64("limit"), views != nil)
	if err != nil {
		return finetune.Data{}, nil, "", userErrorf("%v", err)
	}
	if views == nil {
		return data, classes, "", nil
	}
	// Phase III trains every parameter on fresh views of each sampled
	// example, averaged before the clip.
	public, publicLabels, err := mixWith(c, views, classes)
	if err != nil {
		return finetune.Data{}, nil, "", err
	}
	p3.Views = &finetune.PixelViews{Views: *views, Spec: spec, Pixels: data.Pixels, IDs: data.IDs, Prep: encode.NewPreprocessor(in),
		Public: public, PublicLabels: publicLabels}
	p3.Unit = views.Unit()
	return data, classes, views.Unit(), nil
}

// finetuneRelease makes the run's one release (accounting.Release):
// both phases planned for the target, charged once to the data's ledger
// before any noise, the noise source and the guarantee.
func finetuneRelease(c *ucli.Context, budget *ledger.Ledger, req map[string]string, eps, delta, share float64, n int, p2, p3 *finetune.Phase, unit string, g *finetune.Graph) (accounting.Guarantee, accounting.Noise, error) {
	if w := accounting.DeltaWarning(delta, n); w != "" {
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: %s\n", w)
	}
	noise, err := finetuneNoise(c)
	if err != nil {
		return accounting.Guarantee{}, nil, err
	}
	// The run is one entry in the data's budget ledger (if it has one),
	// charged before the first noise is drawn and the first checkpoint
	// written; a resumed run continues the release its start recorded.
	var charger *ledger.Charger
	if !c.Bool("resume") {
		charger = newCharger(c, budget, "finetune", req["out"])
	} else if name, step, err := finetune.PhaseAt(req["out"]+".checkpoint", g); err == nil {
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: resuming phase %s at step %d\n", name, step)
	}
	ro := accounting.ReleaseOptions{Epsilon: eps, Delta: delta, Noise: noise}
	if charger != nil {
		ro.Charger = charger
	}
	rel, err := accounting.NewRelease("finetune", accounting.Approximate, ro)
	if err != nil {
		return accounting.Guarantee{}, nil, userErrorf("%v", stripInvalid(err))
	}
	guarantee, err := finetune.PlanRelease(rel, share, n, p2, p3, initialParamsPublic(req["params"]), unit)
	if cerr := reportCharge(c, req["data"], charger); cerr != nil {
		return accounting.Guarantee{}, nil, cerr
	}
	if err != nil {
		return accounting.Guarantee{}, nil, userErrorf("%v", err)
	}
	return guarantee, noise, nil
}

// finetuneProgress prints a phase's steps with the noisy gradient's norm
// (never the loss: it is not private).
func finetuneProgress(c *ucli.Context, start time.Time) func(phase string, step, steps int, noisyNorm float64) {
	return func(phase string, step, steps int, noisyNorm float64) {
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: %s step %d/%d, noisy gradient norm %.4g (%s)\n", phase, step, steps, noisyNorm, time.Since(start).Round(time.Second))
	}
}

// finetuneTest scores the trained model on --test (nil without it).
func finetuneTest(c *ucli.Context, g *finetune.Graph, trained [][]float32, in models.Input, classes int) (*float64, error) {
	t := c.String("test")
	if t == "" {
		return nil, nil
	}
	test, _, err := finetune.LoadImages(t, features.DatasetOptions{Split: c.String("test-split")}, in, 0, c.Int64("test-limit"), false)
	if err != nil {
		return nil, userErrorf("%v", err)
	}
	acc, err := finetune.Accuracy(g, trained, test, classes, 0)
	if err != nil {
		return nil, err
	}
	return &acc, nil
}

// finetuneFlags reads the required flags and the budget, and checks the
// counts.
func finetuneFlags(c *ucli.Context) (req map[string]string, eps, delta, share float64, err error) {
	req = map[string]string{}
	for _, name := range []string{"graph", "params", "manifest", "data", "epsilon", "out"} {
		if req[name], err = requiredString(c, name); err != nil {
			return nil, 0, 0, 0, err
		}
	}
	if eps, delta, share, err = finetuneBudget(c, req["epsilon"]); err != nil {
		return nil, 0, 0, 0, err
	}
	for _, f := range []string{"phase2-steps", "phase3-steps", "checkpoint-every", "threads"} {
		if c.Int(f) < 0 {
			return nil, 0, 0, 0, userErrorf("--%s must not be negative", f)
		}
	}
	return req, eps, delta, share, nil
}

func finetuneAction(c *ucli.Context) error {
	start := time.Now()
	req, eps, delta, share, err := finetuneFlags(c)
	if err != nil {
		return err
	}
	out := req["out"]
	ckpt := out + ".checkpoint"
	release, err := claimRun(c, out, ckpt, [][2]string{{"export", c.String("export")}}, "graph", "params", "manifest", "data", "forward")
	if err != nil {
		return err
	}
	defer release()
	budget, err := runLedger(c, req["data"], eps, true)
	if err != nil {
		return err
	}
	if err := checkNotPretrainedOn(req["params"], req["data"], features.DatasetOptions{Split: c.String("split")}); err != nil {
		return err
	}
	man, g, params, err := openTrainingGraph(c, req["graph"], req["params"], req["manifest"])
	if err != nil {
		return err
	}
	defer g.Close()
	in := man.Input
	p2, p3, err := finetunePhases(c, g, req["graph"], share)
	if err != nil {
		return err
	}
	data, classes, unit, err := finetuneData(c, req["data"], in, &p3)
	if err != nil {
		return err
	}
	if err := g.CheckLabels(params, len(classes)); err != nil {
		return userErrorf("%v", err)
	}
	guarantee, noise, err := finetuneRelease(c, budget, req, eps, delta, share, data.N, &p2, &p3, unit, g)
	if err != nil {
		return err
	}
	settings, err := finetuneSettings(c, req, data.N, eps, delta, share, p2, p3)
	if err != nil {
		return err
	}
	run := &finetune.Run{Graph: g, Data: data, Phase2: p2, Phase3: p3, Noise: noise, Checkpoint: ckpt, Every: c.Int("checkpoint-every"), Settings: settings,
		Progress: finetuneProgress(c, start)}
	trained, err := run.Drive(c.Context, params, c.Bool("resume"))
	if err != nil {
		return userErrorf("%v", err)
	}
	rep := finetuneReport{Epsilon: guarantee.Epsilon, Delta: guarantee.Delta, Accountant: string(guarantee.Accountant), Phase2: p2, Phase3: p3,
		Share: share, TrainRows: data.N, Out: out, Guarantee: guarantee, Provider: g.Provider, StepSeconds: run.StepSeconds}
	if rep.Export, err = writeFinetuned(c, g, trained, guarantee, settings, classes); err != nil {
		return err
	}
	os.Remove(ckpt)
	if rep.TestAccuracy, err = finetuneTest(c, g, trained, in, len(classes)); err != nil {
		return err
	}
	rep.Seconds = time.Since(start).Seconds()
	if c.Bool("json") {
		return writeJSON(c.App.Writer, rep)
	}
	return printFinetune(c.App.Writer, rep)
}

func printFinetune(w io.Writer, r finetuneReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "wrote %s: %d training examples, %.1f s\n", r.Out, r.TrainRows, r.Seconds)
	if r.Export != "" {
		fmt.Fprintf(&b, "wrote %s: the trained model as one ONNX file (images in, logits out)\n", r.Export)
	}
	fmt.Fprintf(&b, "privacy: %s\n", r.Guarantee)
	fmt.Fprintf(&b, "phase II: %d full-batch steps of the head, noise multiplier %.4g (share of ε %.2f)\n", r.Phase2.Steps, r.Phase2.Sigma, r.Share)
	fmt.Fprintf(&b, "phase III: %d steps, expected batch %g, noise multiplier %.4g\n", r.Phase3.Steps, r.Phase3.Batch, r.Phase3.Sigma)
	if r.TestAccuracy != nil {
		fmt.Fprintf(&b, "test accuracy: %.4f\n", *r.TestAccuracy)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// finetuneOutputsFree checks --export/--forward and that --out and its
// checkpoint may be written: new, --force to replace, --resume to continue.
func finetuneOutputsFree(c *ucli.Context, ckpt string) error {
	out := c.String("out")
	if (c.String("forward") == "") != (c.String("export") == "") {
		return userErrorf("--forward and --export go together: the forward graph to bake, and the ONNX file to write")
	}
	if e := c.String("export"); e != "" && !c.Bool("force") && !c.Bool("resume") {
		if _, err := os.Stat(e); err == nil {
			return userErrorf("%s exists: pass --force to replace it", e)
		}
	}
	if c.Bool("resume") && c.Bool("force") {
		return userErrorf("--resume and --force exclude each other")
	}
	if !c.Bool("force") && !c.Bool("resume") {
		for _, p := range []string{out, ckpt} {
			if _, err := os.Stat(p); err == nil {
				return userErrorf("%s exists: pass --resume to continue an interrupted run or --force to start over", p)
			}
		}
	}
	if c.Bool("resume") {
		if _, err := os.Stat(ckpt); err != nil {
			return userErrorf("--resume: no checkpoint %s", ckpt)
		}
	}
	return nil
}

// openTrainingGraph reads the encoder manifest, opens the training graph
// on the chosen device, checks its image shape against the manifest and
// loads the parameters.
func openTrainingGraph(c *ucli.Context, graph, paramsPath, manifest string) (_ *models.Manifest, _ *finetune.Graph, _ [][]float32, err error) {
	man, err := models.LoadManifest(manifest)
	if err != nil {
		return nil, nil, nil, userErrorf("%v", err)
	}
	dev, err := encode.ParseDevice(c.String("device"))
	if err != nil {
		return nil, nil, nil, userErrorf("%v", err)
	}
	g, err := finetune.OpenGraph(graph, finetune.GraphOptions{Threads: c.Int("threads"), Device: dev})
	if err != nil {
		return nil, nil, nil, userErrorf("%v", err)
	}
	defer func() {
		if err != nil {
			g.Close() // the session is freed on every refusal after it opened
		}
	}()
	if g.Note != "" {
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: %s\n", g.Note)
	}
	if err := checkImageShape(graph, g.ImageShape, manifest, man.Input); err != nil {
		return nil, nil, nil, err
	}
	params, err := finetune.LoadParams(paramsPath, g)
	if err != nil {
		return nil, nil, nil, userErrorf("%v", err)
	}
	return man, g, params, nil
}

// initialParamsPublic is the guarantee's entry for the initial
// parameters: whatever they were trained on is assumed public; a file
// dpfeat pretrain wrote (DP-RandP's Phase I) says what that was.
func initialParamsPublic(path string) accounting.Assumption {
	a := accounting.Assumption{Kind: accounting.AssumeInitialParams, Subject: path}
	if rep := pretrainedBy(path); rep != nil {
		a.Detail = fmt.Sprintf("Phase I, pretrained by dpfeat pretrain without privacy on %s (%d images, %d steps; checked not to be the data fine-tuned here)", rep.Data, rep.Images, rep.Config.Steps)
	}
	return a
}

// pretrainedBy returns the report of the dpfeat pretrain run that wrote
// the parameters at path, or nil for other parameters.
func pretrainedBy(path string) *pretrainReport {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	_, md, err := models.DecodeSafetensors(b)
	var rep pretrainReport
	if err != nil || json.Unmarshal([]byte(md[MetaPretrain]), &rep) != nil {
		return nil
	}
	return &rep
}

// checkNotPretrainedOn refuses initial parameters that dpfeat pretrain
// trained, without privacy, on the data this run fine-tunes privately
// (#36 item 7): the same source (or one inside or around it), or the same
// data identity.
func checkNotPretrainedOn(params, data string, opt features.DatasetOptions) error {
	rep := pretrainedBy(params)
	if rep == nil {
		return nil
	}
	same := sameFile(rep.Data, data) || within(rep.Data, data) || within(data, rep.Data)
	if !same && rep.DataID != "" {
		id, err := imagesIdentity(data, opt, int64(rep.Images))
		same = err == nil && id == rep.DataID
	}
	if same {
		return userErrorf("--params %s was pretrained by dpfeat pretrain (Phase I, without privacy) on %s, the private data --data %s fine-tunes: Phase I must not see the private data (pretrain on dpfeat synth's images, or on public data)", params, rep.Data, data)
	}
	return nil
}

// checkImageShape checks that a graph's images input takes the images the
// manifest's preprocessing makes.
func checkImageShape(graph string, shape []int64, manifest string, in models.Input) error {
	want := []int64{int64(in.Channels), int64(in.Height), int64(in.Width)}
	if strings.EqualFold(in.Layout, "NHWC") {
		want = []int64{int64(in.Height), int64(in.Width), int64(in.Channels)}
	}
	if !slices.Equal(shape, want) {
		return userErrorf("%s takes images of shape %v; the manifest %s makes %v", graph, shape, manifest, want)
	}
	return nil
}

// finetunePhases reads the two phases' settings: the --head parameters
// Phase II trains, steps, learning rates, batch; a share of 0 or 1 skips
// a phase.
func finetunePhases(c *ucli.Context, g *finetune.Graph, graph string, share float64) (p2, p3 finetune.Phase, err error) {
	trainable := make([]bool, len(g.Params))
	if share > 0 {
		heads := strings.Split(c.String("head"), ",")
		if c.String("head") == "" {
			return p2, p3, userErrorf("--head names the parameters Phase II trains (or pass --phase2-share 0)")
		}
		for _, h := range heads {
			k := slices.IndexFunc(g.Params, func(p finetune.Param) bool { return p.Name == strings.TrimSpace(h) })
			if k < 0 {
				var names []string
				for _, p := range g.Params {
					names = append(names, p.Name)
				}
				return p2, p3, userErrorf("--head: %q is not a parameter of %s (it has %s)", h, graph, strings.Join(names, ", "))
			}
			trainable[k] = true
		}
	}
	p2 = finetune.Phase{Name: "phase II", Trainable: trainable, Steps: c.Int("phase2-steps"), Clip: c.Float64("clip"),
		LR: c.Float64("phase2-lr"), Momentum: c.Float64("momentum")}
	p3 = finetune.Phase{Name: "phase III", Steps: c.Int("phase3-steps"), Batch: c.Float64("batch"), Clip: c.Float64("clip"),
		LR: c.Float64("lr"), Momentum: c.Float64("momentum")}
	if share == 1 {
		p3.Steps = 0
	}
	if share == 0 {
		p2.Steps = 0
	}
	return p2, p3, nil
}

// writeFinetuned writes the trained parameters with the privacy statement
// to --out and, with --forward, the standalone model to --export (whose
// path it returns).
func writeFinetuned(c *ucli.Context, g *finetune.Graph, trained [][]float32, guarantee accounting.Guarantee, settings string, classes []string) (string, error) {
	out := c.String("out")
	meta := map[string]string{"format": "dpfeat.finetune.v1", "privacy": guarantee.String(), "settings": settings, "dpfeat.version": Version}
	if gj, err := json.Marshal(guarantee); err == nil {
		meta["guarantee"] = string(gj)
	}
	meta["classes"] = strings.Join(classes, "\n")
	if err := finetune.SaveParams(out, g, trained, meta); err != nil {
		return "", err
	}
	fwd := c.String("forward")
	if fwd == "" {
		return "", nil
	}
	raw, err := os.ReadFile(fwd)
	if err != nil {
		return "", userErrorf("read %s: %v", fwd, err)
	}
	ts := map[string]finetune.Tensor{}
	for i, p := range g.Params {
		ts[p.Name] = finetune.Tensor{Shape: p.Shape, Data: trained[i]}
	}
	cj, _ := json.Marshal(classes)
	baked, err := finetune.Bake(raw, ts, map[string]string{"dpfeat.privacy": guarantee.String(), "dpfeat.guarantee": meta["guarantee"],
		"dpfeat.classes": string(cj), "dpfeat.version": Version, "dpfeat.settings": settings})
	if err != nil {
		return "", userErrorf("%s: %v", fwd, err)
	}
	if err := atomicfile.WriteBytes(c.String("export"), baked); err != nil {
		return "", err
	}
	return c.String("export"), nil
}

// finetuneBudget reads --epsilon, --delta and Phase II's share of ε.
func finetuneBudget(c *ucli.Context, epsText string) (eps, delta, share float64, err error) {
	eps, err = strconv.ParseFloat(epsText, 64)
	if err != nil || accounting.CheckEpsilon(eps) != nil {
		return 0, 0, 0, userErrorf("--epsilon must be a positive finite number, got %q", epsText)
	}
	if !c.IsSet("delta") {
		return 0, 0, 0, userErrorf("--delta is required (choose it well below 1/n)")
	}
	delta = c.Float64("delta")
	if err := accounting.CheckDelta(delta); err != nil {
		return 0, 0, 0, userErrorf("--delta: %v", err)
	}
	share = finetune.DefaultShare(eps)
	if s := c.String("phase2-share"); s != "" {
		if share, err = strconv.ParseFloat(s, 64); err != nil || !(share >= 0 && share <= 1) {
			return 0, 0, 0, userErrorf("--phase2-share must be in [0, 1], got %q", s)
		}
	}
	return eps, delta, share, nil
}

// finetuneSettings are what a resumed run must repeat: files, data,
// budget, phases, seed.
func finetuneSettings(c *ucli.Context, req map[string]string, n int, eps, delta, share float64, p2, p3 finetune.Phase) (string, error) {
	graphSHA, err := filehash.SHA256(req["graph"])
	if err != nil {
		return "", err
	}
	paramsSHA, err := filehash.SHA256(req["params"])
	if err != nil {
		return "", err
	}
	settings, _ := json.Marshal(map[string]any{"graph": graphSHA, "params": paramsSHA, "data": req["data"], "split": c.String("split"),
		"offset": c.Int64("offset"), "limit": c.Int64("limit"), "n": n, "epsilon": eps, "delta": delta, "share": share,
		"phase2": p2, "phase3": p3, "seed": c.String("seed"), "augment_seed": c.Uint64("augment-seed")})
	return string(settings), nil
}

// finetuneNoise is the run's noise: secure, or seeded with --seed (the
// guarantee then says it is for reproduction only).
func finetuneNoise(c *ucli.Context) (accounting.Noise, error) {
	s := c.String("seed")
	if s == "" {
		return accounting.SecureNoise(), nil
	}
	seed, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil, userErrorf("--seed must be a non-negative whole number, got %q", s)
	}
	fmt.Fprintln(c.App.ErrWriter, "dpfeat: --seed makes the noise predictable: this result is for reproduction only, not private")
	return accounting.SeededNoise(seed), nil
}
