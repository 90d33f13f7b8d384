package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/features"
)

func inspectCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "inspect",
		Usage:     "describe a feature file: rows, dimension, classes and counts, norms, NaN/Inf, metadata",
		UsageText: "dpfeat inspect [--json] FILE\n\nExample:\n   dpfeat inspect --json feats.arrow",
		Flags:     append([]ucli.Flag{jsonFlag()}, importFlags()...),
		Action: func(c *ucli.Context) error {
			if c.NArg() != 1 {
				return userErrorf("inspect takes exactly one feature file, got %d arguments", c.NArg())
			}
			imp, err := importOptions(c)
			if err != nil {
				return err
			}
			f, err := features.Open(c.Args().First(), features.ReadOptions{AllowNonFinite: true, Import: imp})
			if err != nil {
				return err
			}
			defer f.Close()
			if line := f.Imported().Note(f.Path(), f.Classes()); line != "" {
				fmt.Fprintf(c.App.ErrWriter, "dpfeat: %s\n", line)
			}
			s, err := features.Summarize(f, f.ArrowMetadata())
			if err != nil {
				return err
			}
			if v := f.Views(); v != nil && !c.Bool("json") {
				mixes := ""
				if v.MixDiff > 0 {
					mixes = fmt.Sprintf(", %d mixups with public images (soft labels: columns %s, %s)", v.MixDiff, features.ColMixLabel, features.ColMixLambda)
				}
				fmt.Fprintf(c.App.ErrWriter, "dpfeat: %s is multi-view: %d examples, %d views and %d self-mixups%s per example (augment %s); rows and class counts count rows, not examples\n", f.Path(), s.Examples, v.Views, v.MixSelf, mixes, v.Augment)
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, s)
			}
			return printSummary(c.App.Writer, f.Path(), s)
		},
	}
}

func printSummary(w io.Writer, path string, s features.Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", path)
	fmt.Fprintf(&b, "rows:        %d in %d record batch(es)\n", s.Rows, s.Batches)
	fmt.Fprintf(&b, "dimension:   %d\n", s.Dim)
	fmt.Fprintf(&b, "ids:         %v\n", s.HasIDs)
	if len(s.Classes) > 0 {
		fmt.Fprintf(&b, "classes:     %d (labels %d..%d present)\n", len(s.Classes), s.LabelMin, s.LabelMax)
		width := 0
		for _, c := range s.Classes {
			width = max(width, len(c))
		}
		for i, c := range s.Classes {
			fmt.Fprintf(&b, "  %3d %-*s %d\n", i, width, c, s.Counts[i])
		}
		b.WriteString("  (exact counts of the rows: as private as the data, not a private release)\n")
	} else {
		fmt.Fprintf(&b, "classes:     none\n")
	}
	if s.Unlabeled > 0 {
		fmt.Fprintf(&b, "unlabeled:   %d\n", s.Unlabeled)
	}
	fmt.Fprintf(&b, "L2 norms:   ")
	for i, q := range s.NormQuantiles {
		fmt.Fprintf(&b, " p%g=%.4g", s.NormLevels[i]*100, q)
	}
	if s.NormQuantiles == nil {
		fmt.Fprintf(&b, " none (no row is all finite)")
	}
	fmt.Fprintln(&b)
	if s.NonFinite > 0 {
		fmt.Fprintf(&b, "NaN/Inf:     %d values in %d rows — fit refuses such files\n", s.NonFinite, s.NonFiniteRows)
	} else {
		fmt.Fprintf(&b, "NaN/Inf:     none\n")
	}
	keys := make([]string, 0, len(s.Metadata))
	for k := range s.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(&b, "metadata:\n")
	for _, k := range keys {
		v := s.Metadata[k]
		if len(v) > 200 {
			v = v[:200] + "…"
		}
		fmt.Fprintf(&b, "  %s = %s\n", k, v)
	}
	return printf(w, "%s", b.String())
}
