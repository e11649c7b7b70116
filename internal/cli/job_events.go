package cli

import (
	ucli "github.com/urfave/cli/v2"
)

func jobEventsCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "events",
		Usage:     "print a job's events, oldest first",
		UsageText: "resque-go job events ID [--json]",
		Description: "Reads the events stream (<ns>:resque-go:events) for the job with id ID: enqueued, started,\n" +
			"succeeded, failed, retried, rescheduled... while the stream keeps them (work --events-max-len,\n" +
			"--events-max-age). The whole stream is read (at most its length), a page at a time.",
		Flags: append(redisFlags(), &ucli.BoolFlag{Name: "json", Usage: "print JSON"}),
		Action: func(c *ucli.Context) error {
			if c.NArg() != 1 || c.Args().First() == "" {
				return usagef("job events takes one job id (resque-go job events ID)")
			}
			client, err := newClient(c)
			if err != nil {
				return err
			}
			defer client.Close()
			id := c.Args().First()
			if !c.Bool("json") {
				return writeJobEvents(c.Context, c.App.Writer, client, id)
			}
			evs, err := client.JobEvents(c.Context, id)
			if err != nil {
				return err
			}
			items := make([]eventJSON, 0, len(evs))
			for _, e := range evs {
				items = append(items, toEventJSON(e))
			}
			return writeJSON(c.App.Writer, listOf(items))
		},
	}
}
