package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/protocol"
)

func enqueueCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "enqueue",
		Usage:     "push a job onto a queue",
		UsageText: "resque-go enqueue --queue mail --class MailJob --args '[1,\"two\"]'",
		Flags: append(redisFlags(),
			&ucli.StringFlag{Name: "queue", Usage: "queue name", Required: true},
			&ucli.StringFlag{Name: "class", Usage: "job class", Required: true},
			&ucli.StringFlag{Name: "args", Usage: "JSON args: an array, or an object (kept as is); any other value is wrapped in an array", Value: "[]"},
			&ucli.BoolFlag{Name: "plain", Usage: "write only class and args, byte-identical to Ruby's Resque.enqueue"},
		),
		Action: func(c *ucli.Context) error {
			queue := c.String("queue")
			if err := protocol.ValidateQueueName(queue); err != nil {
				return usageError{err}
			}
			payload, err := protocol.NewPayload(c.String("class"), []byte(c.String("args")), protocol.EnqueueOptions{Plain: c.Bool("plain")})
			if err != nil {
				return usageError{err}
			}
			client, err := newClient(c)
			if err != nil {
				return err
			}
			defer client.Close()
			if err := client.Enqueue(c.Context, queue, payload); err != nil {
				return err
			}
			fmt.Fprintln(c.App.Writer, string(payload))
			return nil
		},
	}
}
