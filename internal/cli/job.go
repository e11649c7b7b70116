package cli

import ucli "github.com/urfave/cli/v2"

// jobCommand is `job`: one job by its id. Each subcommand is in its own
// file (job_<name>.go).
func jobCommand() *ucli.Command {
	return &ucli.Command{
		Name:        "job",
		Usage:       "inspect one job by its id",
		Subcommands: []*ucli.Command{jobShowCommand()},
	}
}
