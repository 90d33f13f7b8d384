package cli

import (
	"os"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/features"
)

// importFlags are the flags that say how to read a feature file that is
// not a dpfeat feature file (features.ImportOptions): the same on every
// command that reads features.
func importFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "classes", Usage: "the class names, in order, as a,b,c or @FILE (one per line): for files without class names (otherwise taken from the label values and assumed public); renames a dpfeat file's classes"},
		&ucli.StringFlag{Name: "features-column", Usage: "Parquet/Arrow: the list column holding the features; .npz: the features array (default: the one list column, else every numeric column)"},
		&ucli.StringFlag{Name: "label-column", Usage: "the label column or .npz array (default: the first of " + strings.Join(features.DefaultLabelColumns, ", ") + "; a CSV without a header: its 0-based number)"},
		&ucli.StringFlag{Name: "id-column", Usage: "the id column or .npz array (default: id); \"\" takes a CSV file's unnamed first column (the index pandas writes) as the id"},
		&ucli.StringFlag{Name: "labels", Usage: "labels for a features-only .npy file: an .npy array or a text file with one label per line"},
	}
}

// importOptions reads the import flags.
func importOptions(c *ucli.Context) (features.ImportOptions, error) {
	o := features.ImportOptions{FeaturesColumn: c.String("features-column"), LabelColumn: c.String("label-column"),
		IDColumn: c.String("id-column"), Labels: c.String("labels")}
	// --id-column "" is not "unset": it takes a CSV file's unnamed first
	// column (pandas' index) as the id.
	o.IDFromIndex = c.IsSet("id-column") && c.String("id-column") == ""
	var err error
	if o.Classes, err = classList(c); err != nil {
		return o, err
	}
	if m := c.String("memory"); m != "" { // (fit's budget bounds what its readers hold)
		if o.Memory, err = parseBytes(m); err != nil {
			return o, userErrorf("--memory %s: %v", m, err)
		}
	}
	return o, nil
}

// classList reads --classes, the one parser of the flag (extract's and
// every command's that reads features): a,b,c or @FILE with one name per
// line; none empty, none twice; nil when not given.
func classList(c *ucli.Context) ([]string, error) {
	spec := c.String("classes")
	var names []string
	switch {
	case spec == "":
		return nil, nil
	case strings.HasPrefix(spec, "@"):
		b, err := os.ReadFile(spec[1:])
		if err != nil {
			return nil, userErrorf("--classes %s: %v", spec, err)
		}
		for _, line := range strings.Split(strings.TrimRight(string(b), "\r\n"), "\n") {
			names = append(names, strings.TrimSpace(strings.TrimSuffix(line, "\r")))
		}
	default:
		for _, name := range strings.Split(spec, ",") {
			names = append(names, strings.TrimSpace(name))
		}
	}
	if err := features.CheckClassNames(names); err != nil {
		return nil, userErrorf("--classes: %v", err)
	}
	return names, nil
}
