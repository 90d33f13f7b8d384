package cli

import (
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/features"
)

func splitCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "split",
		Usage: "split a feature file into training and validation files by a per-row rule (a keyed hash of each row's id or content)",
		UsageText: "dpfeat split --in FEATS.arrow --val-fraction F --train TRAIN.arrow --val VAL.arrow [--key K] [--json]\n\n" +
			"Example:\n   dpfeat split --in train.arrow --val-fraction 0.1 --train tr.arrow --val va.arrow --key 1",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "in", Usage: "feature file to split (required)"},
			forceFlag(),
			&ucli.Float64Flag{Name: "val-fraction", Value: 0.1, Usage: "expected share of the rows that go to validation, in (0, 1); each row's side depends on that row alone"},
			&ucli.StringFlag{Name: "train", Usage: "output: training rows (required)"},
			&ucli.StringFlag{Name: "val", Usage: "output: validation rows (required)"},
			&ucli.Uint64Flag{Name: "key", Usage: "key of the split's hash; the same key gives the same split"},
			jsonFlag(),
		},
		Action: func(c *ucli.Context) error {
			in, err := requiredString(c, "in")
			if err != nil {
				return err
			}
			for _, f := range []string{"train", "val"} {
				if err := checkExtension(f, c.String(f), ".arrow"); err != nil {
					return err
				}
			}
			outs, err := outputs(c, in, "train", "val")
			if err != nil {
				return err
			}
			frac := c.Float64("val-fraction") // checked by NewRowSplit, the one rule
			f, labels, err := openWithLabels(in)
			if err != nil {
				return err
			}
			defer f.Close()
			rule, err := features.NewRowSplit(frac, c.Uint64("key"))
			if err != nil {
				return userErrorf("--val-fraction: %v", err)
			}
			val, train, err := rule.SelectFile(f)
			if err != nil {
				return err
			}
			parts := []struct {
				flag, name string
				rows       []int
			}{{"train", "train", train}, {"val", "validation", val}}
			// Both parts or neither: a split that leaves one empty writes
			// nothing (the other file alone would be half a result).
			for _, part := range parts {
				if len(part.rows) == 0 {
					return userErrorf("%s: no row of its %d goes to --%s at --val-fraction %g with --key %d; nothing written: take another --key or --val-fraction (each row's side is a hash of that row alone, so small files can leave a part empty)",
						in, len(labels), part.flag, frac, c.Uint64("key"))
				}
			}
			res := map[string]any{"in": in, "key": c.Uint64("key"), "val_fraction": frac}
			for i, part := range parts {
				meta := f.Metadata()
				meta.Subset = &features.Derivation{Kind: "validation-split", From: describeFrom(f), Seed: c.Uint64("key"), Part: part.name, Fraction: frac, Counts: countRows(labels, part.rows, len(f.Classes()))}
				if err := features.CopyRows(f, part.rows, outs[i], meta); err != nil {
					return err
				}
				res[part.name] = map[string]any{"path": outs[i], "rows": len(part.rows), "class_counts": meta.Subset.Counts}
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, res)
			}
			return printf(c.App.Writer, "%s: %d rows → %s (train, %d rows) and %s (validation, %d rows), key %d; exact counts, as private as the data\n",
				in, len(labels), outs[0], len(train), outs[1], len(val), c.Uint64("key"))
		},
	}
}

func imbalanceCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "imbalance",
		Usage: "write a class-imbalanced subset of a feature file (Cui et al. 2019 / DPPL profiles) by a per-row rule",
		UsageText: "dpfeat imbalance --in FEATS.arrow --ratio IR --out OUT.arrow [--profile cui|dppl] [--rate R] [--key K] [--json]\n\n" +
			"A row of class c is kept with probability R·IR^(−c/(C−1)) (cui) or R·exp(−c·ln(IR)/C) (dppl, the DPPL\n" +
			"code's variant), decided by a keyed hash of that row alone, so that one example never changes which\n" +
			"others are kept; on balanced data the class sizes follow the profile (binomially).\n\n" +
			"Example:\n   dpfeat imbalance --in train.arrow --ratio 100 --out train-lt.arrow --key 1",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "in", Usage: "feature file (required)"},
			forceFlag(),
			&ucli.Float64Flag{Name: "ratio", Usage: "imbalance ratio IR ≥ 1: largest over smallest class (required)"},
			&ucli.StringFlag{Name: "profile", Value: string(features.ProfileCui), Usage: "cui or dppl"},
			&ucli.Float64Flag{Name: "rate", Value: 1, Usage: "class 0's keep probability R, in (0, 1]"},
			&ucli.StringFlag{Name: "out", Usage: "output feature file (required)"},
			&ucli.Uint64Flag{Name: "key", Usage: "key of the rows' hash; the same key keeps the same rows"},
			jsonFlag(),
		},
		Action: func(c *ucli.Context) error {
			in, err := requiredString(c, "in")
			if err != nil {
				return err
			}
			if err := checkExtension("out", c.String("out"), ".arrow"); err != nil {
				return err
			}
			outs, err := outputs(c, in, "out")
			if err != nil {
				return err
			}
			if !c.IsSet("ratio") {
				return userErrorf("--ratio is required")
			}
			ir := c.Float64("ratio")
			if !(ir >= 1) {
				return userErrorf("--ratio must be ≥ 1, got %v", ir)
			}
			profile := features.Profile(strings.ToLower(c.String("profile")))
			if profile != features.ProfileCui && profile != features.ProfileDPPL {
				return userErrorf("--profile must be cui or dppl, got %q", c.String("profile"))
			}
			f, labels, err := openWithLabels(in)
			if err != nil {
				return err
			}
			defer f.Close()
			rule, err := features.NewImbalance(len(f.Classes()), ir, profile, c.Float64("rate"), c.Uint64("key"))
			if err != nil {
				return userErrorf("--rate: %v", err)
			}
			rows, _, err := rule.SelectFile(f)
			if err != nil {
				return err
			}
			counts := countRows(labels, rows, len(f.Classes()))
			meta := f.Metadata()
			meta.Subset = &features.Derivation{Kind: "imbalanced", From: describeFrom(f), Seed: c.Uint64("key"), ImbalanceRatio: ir, Profile: string(profile), Counts: counts}
			if err := features.CopyRows(f, rows, outs[0], meta); err != nil {
				return err
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, map[string]any{"in": in, "out": outs[0], "rows": len(rows), "class_counts": counts, "imbalance_ratio": ir, "profile": profile, "key": c.Uint64("key")})
			}
			return printf(c.App.Writer, "%s: %d of %d rows → %s (IR %g, %s profile, key %d); class counts %v (exact, as private as the data)\n",
				in, len(rows), len(labels), outs[0], ir, profile, c.Uint64("key"), counts)
		},
	}
}

func requiredString(c *ucli.Context, name string) (string, error) {
	v := c.String(name)
	if v == "" {
		return "", userErrorf("--%s is required", name)
	}
	return v, nil
}

// outputs returns the named output paths, all required, distinct, none
// of them the input (guardOutputs), and none an existing file unless
// --force (refuseExisting).
func outputs(c *ucli.Context, in string, names ...string) ([]string, error) {
	var out []string
	for _, n := range names {
		p, err := requiredString(c, n)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if err := guardOutputs(flagPaths(c, names...), [][2]string{{"in", in}}); err != nil {
		return nil, err
	}
	for i, n := range names {
		if err := refuseExisting(c, n, out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// openWithLabels opens a labelled feature file and reads its labels.
func openWithLabels(path string) (*features.File, []int32, error) {
	f, err := features.Open(path, features.ReadOptions{})
	if err != nil {
		return nil, nil, err
	}
	if len(f.Classes()) == 0 {
		f.Close()
		return nil, nil, userErrorf("%s has no class names (dpfeat.classes); it cannot be split by class", path)
	}
	labels := make([]int32, 0, f.Rows())
	if err := f.Each(func(b features.Batch) error { labels = append(labels, b.Labels...); return nil }); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, labels, nil
}

func describeFrom(f *features.File) string {
	if s := f.Metadata().Source; s != "" {
		return f.Path() + " (" + s + ")"
	}
	return f.Path()
}

func countRows(labels []int32, rows []int, classes int) []int64 {
	out := make([]int64, classes)
	for _, r := range rows {
		if l := labels[r]; l >= 0 && int(l) < classes {
			out[l]++
		}
	}
	return out
}
