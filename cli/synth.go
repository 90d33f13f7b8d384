package cli

import (
	"path/filepath"
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/randproc"
)

func synthCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "synth",
		Usage: "generate images from random processes (dead leaves, power-law spectra): DP-RandP's Phase I data, which holds no natural image and no private data",
		UsageText: "dpfeat synth --process deadleaves,spectrum --size HxW --channels C --count N --out DIR [--seed S] [--resume] [--json]\n\n" +
			"Writes DIR/<process>/<index>.png (an image folder whose classes are the processes), DIR/" + randproc.SettingsFile + " and a contact\n" +
			"sheet DIR/" + randproc.ContactSheet + ".\n\n" +
			"Example:\n   dpfeat synth --process deadleaves,spectrum --size 28x28 --channels 1 --count 50000 --out synth",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "process", Value: "deadleaves,spectrum", Usage: "random processes, comma-separated, taking turns: " + strings.Join(randproc.Processes, ", ")},
			&ucli.StringFlag{Name: "size", Value: "32x32", Usage: "image size HxW in pixels"},
			&ucli.IntFlag{Name: "channels", Value: 3, Usage: "1 (grey) or 3 (RGB)"},
			&ucli.Int64Flag{Name: "count", Value: 10000, Usage: "number of images"},
			&ucli.StringFlag{Name: "out", Usage: "output folder (required; new or empty, or an interrupted run's with --resume)"},
			&ucli.Uint64Flag{Name: "seed", Usage: "keys every image: the same flags give the same images"},
			&ucli.BoolFlag{Name: "resume", Usage: "finish an interrupted run into --out (the same flags)"},
			jsonFlag(),
		},
		Action: synthAction,
	}
}

func synthAction(c *ucli.Context) error {
	out, err := requiredString(c, "out")
	if err != nil {
		return err
	}
	h, w, ok := strings.Cut(strings.ToLower(c.String("size")), "x")
	H, herr := strconv.Atoi(strings.TrimSpace(h))
	W, werr := strconv.Atoi(strings.TrimSpace(w))
	if !ok || herr != nil || werr != nil {
		return userErrorf("--size %q: expected HxW, e.g. 28x28", c.String("size"))
	}
	o := randproc.Options{Processes: strings.Split(c.String("process"), ","), Width: W, Height: H, Channels: c.Int("channels"), Count: c.Int64("count"), Seed: c.Uint64("seed")}
	for i, p := range o.Processes {
		o.Processes[i] = strings.TrimSpace(p)
	}
	if err := o.Check(); err != nil {
		return userErrorf("synth: %v", err)
	}
	prog := newFitProgress(c.App.ErrWriter)
	made, err := randproc.Generate(c.Context, out, o, c.Bool("resume"), func(done, total int64) {
		prog.line("synth: %d of %d images", done, total)
	})
	prog.done()
	if err != nil {
		return userErrorf("synth: %v", err)
	}
	res := map[string]any{"out": out, "images": o.Count, "made": made, "processes": o.Processes, "width": W, "height": H,
		"channels": o.Channels, "seed": o.Seed, "contact_sheet": filepath.Join(out, randproc.ContactSheet)}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, res)
	}
	return printf(c.App.Writer, "%s: %d images (%s, %d×%d, %d channel(s); %d made this run); contact sheet %s\n",
		out, o.Count, strings.Join(o.Processes, ", "), H, W, o.Channels, made, res["contact_sheet"])
}
