package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// helpGroup is one heading of the command list in --help.
type helpGroup struct {
	name     string
	commands []*ucli.Command
}

// grouped sets each command's Category to its group's name and returns
// the commands in the order --help lists them.
func grouped(groups ...helpGroup) []*ucli.Command {
	var cmds []*ucli.Command
	for _, g := range groups {
		for _, c := range g.commands {
			c.Category = g.name
			cmds = append(cmds, c)
		}
	}
	return cmds
}

// appHelpTemplate is urfave/cli's AppHelpTemplate with the commands listed
// under their groups in the order given (urfave/cli sorts groups by name).
// Commands without a group (urfave/cli's help) go under the last one.
func appHelpTemplate(groups []string) string {
	var list strings.Builder
	for i, g := range groups {
		cond := fmt.Sprintf("eq .Category %q", g)
		if i == len(groups)-1 {
			cond = fmt.Sprintf("or (eq .Category %q) (eq .Category \"\")", g)
		}
		fmt.Fprintf(&list, "\n   %s:{{range .VisibleCommands}}{{if %s}}\n     {{join .Names \", \"}}{{\"\\t\"}}{{.Usage}}{{end}}{{end}}", g, cond)
	}
	return `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{.HelpName}} command [flags] [arguments]{{if .Description}}

DESCRIPTION:
   {{template "descriptionTemplate" .}}{{end}}

COMMANDS:` + list.String() + `{{if .VisibleFlags}}

GLOBAL OPTIONS:{{template "visibleFlagTemplate" .}}{{end}}

Run '{{.HelpName}} COMMAND --help' for a command's flags and arguments; flags may come before or after arguments.
`
}

// versionLine is what --version and the version command print: the module
// version and VCS revision the Go toolchain records in the binary, e.g.
// "resque-go v0.4.0 go1.26.8" (go install ...@v0.4.0) or
// "resque-go (devel) (rev 1a2b3c4, dirty) go1.26.8" (built in a checkout).
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "resque-go (unknown version: no build information)"
	}
	return formatVersion(info)
}

func formatVersion(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	line := "resque-go " + v
	if rev != "" {
		line += " (rev " + rev[:min(len(rev), 7)]
		if dirty {
			line += ", dirty"
		}
		line += ")"
	}
	return line + " " + info.GoVersion
}

func versionCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "version",
		Usage:     "print the version, VCS revision and Go version of this binary (as --version)",
		ArgsUsage: " ",
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usagef("version takes no arguments (got %q)", c.Args().First())
			}
			_, err := fmt.Fprintln(c.App.Writer, versionLine())
			return err
		},
	}
}
