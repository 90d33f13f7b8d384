package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"
)

// A renamed flag: one name, one meaning across commands (#40). The old
// spelling keeps working, hidden from the help, for one release, with a
// note on stderr naming the new one.
type renamed struct{ old, now string }

// The renames, by command. --model and --encoder both named the ONNX
// encoder; --data named images in extract but a feature file in budget
// and report; --batch named images per encoder call in extract and
// predict but the (Poisson) training batch in fit, finetune and
// pretrain; --seed named split's and imbalance's hash key but the noise
// seed in fit.
var renames = map[string][]renamed{
	"extract":   {{"model", "encoder"}, {"batch", "encoder-batch"}},
	"predict":   {{"model", "encoder"}, {"batch", "encoder-batch"}},
	"budget":    {{"data", "features"}},
	"report":    {{"data", "features"}},
	"split":     {{"seed", "key"}},
	"imbalance": {{"seed", "key"}},
}

// addRenamed adds each command's hidden old spellings (and its
// subcommands'), and makes the action read them under the new name.
func addRenamed(cmds []*ucli.Command) {
	for _, c := range cmds {
		addRenamed(c.Subcommands)
		rs := renames[c.Name]
		if len(rs) == 0 {
			continue
		}
		if len(c.Subcommands) > 0 {
			// budget's flags live on its subcommands.
			for _, sub := range c.Subcommands {
				renameFlags(sub, rs)
			}
			continue
		}
		renameFlags(c, rs)
	}
}

func renameFlags(c *ucli.Command, rs []renamed) {
	var mine []renamed
	for _, r := range rs {
		f := findFlag(c.Flags, r.now)
		if f == nil {
			continue
		}
		c.Flags = append(c.Flags, hiddenCopy(f, r.old))
		mine = append(mine, r)
	}
	if len(mine) == 0 || c.Action == nil {
		return
	}
	action := c.Action
	c.Action = func(ctx *ucli.Context) error {
		for _, r := range mine {
			if !ctx.IsSet(r.old) {
				continue
			}
			if ctx.IsSet(r.now) {
				return userErrorf("--%s is the old name of --%s: give one of them", r.old, r.now)
			}
			if err := ctx.Set(r.now, fmt.Sprint(ctx.Value(r.old))); err != nil {
				return userErrorf("--%s: %v", r.old, err)
			}
			if !ctx.Bool("quiet") {
				fmt.Fprintf(ctx.App.ErrWriter, "dpfeat: note: --%s is now --%s; the old name works for one more release\n", r.old, r.now)
			}
		}
		return action(ctx)
	}
}

func findFlag(fs []ucli.Flag, name string) ucli.Flag {
	for _, f := range fs {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// hiddenCopy is a hidden flag named old of f's type, without a default.
func hiddenCopy(f ucli.Flag, old string) ucli.Flag {
	usage := "old name of --" + f.Names()[0]
	switch f.(type) {
	case *ucli.StringFlag:
		return &ucli.StringFlag{Name: old, Hidden: true, Usage: usage}
	case *ucli.IntFlag:
		return &ucli.IntFlag{Name: old, Hidden: true, Usage: usage}
	case *ucli.Uint64Flag:
		return &ucli.Uint64Flag{Name: old, Hidden: true, Usage: usage}
	case *ucli.Float64Flag:
		return &ucli.Float64Flag{Name: old, Hidden: true, Usage: usage}
	}
	panic(fmt.Sprintf("renamed flag --%s: type %T not handled", old, f))
}
