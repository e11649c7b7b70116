package cli

import ucli "github.com/urfave/cli/v2"

// jobCommand groups the commands about one job.
func jobCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "job",
		Usage: "act on one job",
		Subcommands: []*ucli.Command{
			jobCancelCommand(),
		},
	}
}
