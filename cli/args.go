package cli

import (
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// interspersed moves a command's flags before its positional arguments,
// so that `dpfeat inspect FILE --json` means what `dpfeat inspect --json
// FILE` does (urfave/cli stops reading flags at the first argument). A
// flag's value moves with it; everything after "--" stays where it is.
func interspersed(app *ucli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	cmds := app.Commands
	var cmd *ucli.Command
	i := 1
	// The command path: names of commands and subcommands, in order.
	for i < len(args) {
		next := findCommand(cmds, args[i])
		if next == nil {
			break
		}
		cmd, cmds = next, next.Subcommands
		out = append(out, args[i])
		i++
	}
	if cmd == nil {
		return args
	}
	var flags, positional []string
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if takesValue(cmd, name) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return append(append(out, flags...), positional...)
}

func findCommand(cmds []*ucli.Command, name string) *ucli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// takesValue reports whether the command's flag name reads the next
// argument as its value (every flag but a boolean one).
func takesValue(cmd *ucli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*ucli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}
