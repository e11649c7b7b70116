package cli

import (
	"fmt"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/protocol"
)

func jobListCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "list",
		Usage:     "list the jobs enqueued with a tag, newest first",
		UsageText: "resque-go job list --tag TAG [--offset N] [--limit N] [--json]",
		Description: "Reads the tag's index (<ns>:resque-go:tag:TAG): the ids of the jobs `enqueue --tag` wrote that have\n" +
			"not ended yet (a job leaves its tags' indexes when it succeeds, fails for good or is\n" +
			"discarded; a retried job stays), with when each was enqueued. An index keeps the newest\n" +
			"10,000 ids.",
		Flags: append(redisFlags(),
			&ucli.StringFlag{Name: "tag", Usage: "the jobs enqueued with `TAG`", Required: true},
			&ucli.IntFlag{Name: "offset", Usage: "skip the newest `N`"},
			&ucli.IntFlag{Name: "limit", Value: 100, Usage: "print at most `N` (0: all)"},
			&ucli.BoolFlag{Name: "json", Usage: "print JSON"},
		),
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usagef("job list takes no arguments (got %q); give the tag as --tag TAG", c.Args().First())
			}
			tag := c.String("tag")
			if err := protocol.CheckTag(tag); err != nil {
				return usageError{err}
			}
			off, limit := c.Int("offset"), c.Int("limit")
			if off < 0 || limit < 0 {
				return usagef("--offset and --limit: want 0 or more")
			}
			client, err := newClient(c)
			if err != nil {
				return err
			}
			defer client.Close()
			jobs, total, err := client.TagJobs(c.Context, tag, off, limit)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				type item struct {
					ID         string  `json:"id"`
					EnqueuedAt *string `json:"enqueued_at"`
				}
				items := make([]item, 0, len(jobs))
				for _, j := range jobs {
					items = append(items, item{ID: j.ID, EnqueuedAt: jsonTime(j.At)})
				}
				return writeJSON(c.App.Writer, struct {
					listJSON[item]
					Offset int `json:"offset"`
					Limit  int `json:"limit"`
				}{listJSON[item]{Items: items, Total: total}, off, limit})
			}
			for _, j := range jobs {
				fmt.Fprintf(c.App.Writer, "%s  %s\n", j.At.UTC().Format(time.RFC3339), j.ID)
			}
			if len(jobs) < total {
				fmt.Fprintf(c.App.Writer, "(%d of %d)\n", len(jobs), total)
			}
			return nil
		},
	}
}
