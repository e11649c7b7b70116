package cli

import ucli "github.com/urfave/cli/v2"

// jobCommand groups the commands about one job or a set of jobs; each
// subcommand lives in its own file (job_<name>.go).
func jobCommand() *ucli.Command {
	return &ucli.Command{Name: "job", Usage: "look at and act on jobs: one by its id, by tag, a job's events, cancel a running one", Subcommands: []*ucli.Command{
		jobShowCommand(),
		jobListCommand(),
		jobEventsCommand(),
		jobCancelCommand(),
	}}
}
