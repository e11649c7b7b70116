package cli

import (
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// flagsFirst returns args (os.Args form) with the flags of the command they
// run moved ahead of its positional arguments, so that flags may come
// anywhere, as with git, kubectl and go: `failed retry 3 --redis X` reads
// as `failed retry --redis X 3`. urfave/cli v2 stops reading flags at the
// first positional argument.
//
// The command is found as urfave/cli finds it: the names of commands and
// subcommands, each after its own flags. Only the tokens after that
// command's name move. A flag that takes a value keeps the token after it
// (`--class Drop`, unless written `--class=Drop`); an unknown flag moves
// alone and is refused by the parser as before. `--` ends the flags: what
// follows stays positional, in order; the positional arguments get a `--`
// of their own when one of them starts with "-".
func flagsFirst(app *ucli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	flags, cmds := app.Flags, app.Commands
	start := 1 // the first token after the name of the command that runs
	for i := 1; i < len(args) && args[i] != "--"; i++ {
		if isFlagToken(args[i]) {
			i += flagWidth(flags, args[i]) - 1
			continue
		}
		sub := findCommand(cmds, args[i])
		if sub == nil {
			break
		}
		flags, cmds = sub.Flags, sub.Subcommands
		start = i + 1
	}
	if start == 1 {
		return args // no command: the app itself takes no arguments
	}
	out := append([]string(nil), args[:start]...)
	var pos []string
	dashes := false
	for j := start; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "--":
			for _, p := range args[j+1:] {
				pos = append(pos, p)
				dashes = dashes || strings.HasPrefix(p, "-")
			}
			j = len(args)
		case isFlagToken(a):
			w := min(flagWidth(flags, a), len(args)-j)
			out = append(out, args[j:j+w]...)
			j += w - 1
		default:
			pos = append(pos, a)
			dashes = dashes || strings.HasPrefix(a, "-")
		}
	}
	if dashes {
		out = append(out, "--")
	}
	return append(out, pos...)
}

// isFlagToken reports whether a reads as a flag: "-x", "--name", "--name=v";
// not "-" alone (stdin by convention), "--", or a negative number ("-1"),
// which is an argument, refused or taken by the command that reads it.
func isFlagToken(a string) bool {
	return len(a) > 1 && a[0] == '-' && a != "--" && !strings.ContainsRune("0123456789.", rune(a[1]))
}

// flagWidth is how many tokens flag token a spans among flags: 2 when it
// names a flag that takes a value not given with "=", else 1.
func flagWidth(flags []ucli.Flag, a string) int {
	name := strings.TrimLeft(a, "-")
	if strings.Contains(name, "=") {
		return 1
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if v, ok := f.(ucli.DocGenerationFlag); ok && v.TakesValue() {
				return 2
			}
			return 1
		}
	}
	return 1
}

// findCommand is the command of cmds named (or aliased) name, or nil.
func findCommand(cmds []*ucli.Command, name string) *ucli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
