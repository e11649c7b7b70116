package cli

import (
	"bytes"
	"encoding/json"
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
			&ucli.StringFlag{Name: "queue", Usage: "queue name (required)"},
			&ucli.StringFlag{Name: "class", Usage: "job class (required)"},
			&ucli.StringFlag{Name: "args", Usage: "JSON args: an array (one element per argument), or an object (kept as is, as php-resque and resque-v3 write it)", Value: "[]"},
			&ucli.BoolFlag{Name: "plain", Usage: "write only class and args, byte-identical to Ruby's Resque.enqueue (args must be an array)"},
		),
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usagef("enqueue takes no arguments (got %q); give the job's arguments as --args '[...]'", c.Args().First())
			}
			queue, class := c.String("queue"), c.String("class")
			if queue == "" || class == "" {
				return usagef("enqueue needs --queue and --class")
			}
			if err := protocol.ValidateQueueName(queue); err != nil {
				return usageError{err}
			}
			args := bytes.TrimSpace([]byte(c.String("args")))
			if err := checkArgs(args, c.Bool("plain")); err != nil {
				return err
			}
			payload, err := protocol.NewPayload(class, args, protocol.EnqueueOptions{Plain: c.Bool("plain")})
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

// checkArgs accepts a JSON array, or an object unless plain: Ruby's
// Resque.enqueue always writes an array, and a lone value such as 5 is
// ambiguous (one argument 5, or a typo), so it is refused with the fix.
func checkArgs(args []byte, plain bool) error {
	if len(args) == 0 || !json.Valid(args) {
		return nil // NewPayload reports invalid JSON; empty means []
	}
	switch {
	case args[0] == '[':
		return nil
	case args[0] == '{' && !plain:
		return nil
	case args[0] == '{':
		return usagef("--plain writes args as Ruby's Resque.enqueue does, always an array: pass the object as one argument, --args '[%s]'", clip(string(args), 200))
	}
	return usagef("--args '%s': want a JSON array of arguments (or an object); for one argument write --args '[%s]'", clip(string(args), 200), clip(string(args), 200))
}
