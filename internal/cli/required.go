package cli

import (
	"fmt"
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// requiredMark starts the help text of a flag a command cannot run without.
const requiredMark = "(required) "

// takeRequired moves the flags of cmd marked Required to the front of its
// flags, marks their help with requiredMark, names them in its USAGE line
// ("--source SOURCE") and returns their names; it
// clears their Required field, so that a missing one is reported by
// checkRequired (one line and exit 2) and not by urfave/cli (the whole
// help and exit 1).
func takeRequired(cmd *ucli.Command) []string {
	var names []string
	var required, rest []ucli.Flag
	for _, f := range cmd.Flags {
		if r, ok := f.(ucli.RequiredFlag); !ok || !r.IsRequired() {
			rest = append(rest, f)
			continue
		}
		switch f := f.(type) {
		case *ucli.StringFlag:
			f.Required, f.Usage = false, marked(f.Usage)
		case *ucli.IntFlag:
			f.Required, f.Usage = false, marked(f.Usage)
		case *ucli.Int64Flag:
			f.Required, f.Usage = false, marked(f.Usage)
		case *ucli.DurationFlag:
			f.Required, f.Usage = false, marked(f.Usage)
		case *ucli.StringSliceFlag:
			f.Required, f.Usage = false, marked(f.Usage)
		default:
			panic(fmt.Sprintf("cli: required flag --%s of %s: type %T not handled", f.Names()[0], cmd.Name, f))
		}
		names = append(names, f.Names()[0])
		required = append(required, f)
	}
	cmd.Flags = append(required, rest...)
	if len(names) > 0 && cmd.UsageText == "" {
		var usage []string
		for _, n := range names {
			usage = append(usage, "--"+n+" "+strings.ToUpper(n))
		}
		cmd.ArgsUsage = strings.TrimSpace(strings.Join(usage, " ") + " " + cmd.ArgsUsage)
	}
	return names
}

func marked(usage string) string {
	if strings.HasPrefix(usage, requiredMark) {
		return usage
	}
	return requiredMark + usage
}

// checkRequired refuses a run of the command at path without one of the
// flags named (from the command line or their environment variables).
func checkRequired(c *ucli.Context, path string, names []string) error {
	var missing []string
	for _, n := range names {
		if !c.IsSet(n) {
			missing = append(missing, "--"+n)
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return usagef("%s needs %s", path, missing[0])
	default:
		return usagef("%s needs %s and %s", path, strings.Join(missing[:len(missing)-1], ", "), missing[len(missing)-1])
	}
}
