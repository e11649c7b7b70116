package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// groupCommand is `group`: a group's callbacks and counters
// (docs/dependencies.md).
func groupCommand() *ucli.Command {
	cbFlags := func() []ucli.Flag {
		return append(redisFlags(),
			&ucli.StringFlag{Name: "queue", Usage: "the callback job's `QUEUE`", Required: true},
			&ucli.StringFlag{Name: "class", Usage: "the callback job's `CLASS`", Required: true},
			&ucli.StringFlag{Name: "args", Usage: "the callback's `JSON` args, an array; the group's counts are appended as one more argument", Value: "[]"},
		)
	}
	cbDesc := "Seals the group: enqueue its jobs (enqueue --group G) first. The callback is enqueued\n" +
		"exactly once, when the last job of the group ends (at once when none is pending), with\n" +
		"{\"group\",\"total\",\"succeeded\",\"failed\"} appended to its args. A job counts once, at its\n" +
		"last attempt. Prints \"fired\" when the group fired now, else \"registered\"."
	return &ucli.Command{
		Name:  "group",
		Usage: "callbacks and counters of groups of jobs (enqueue --group)",
		Description: "A group counts its jobs (resque-go:group:<g>: total, pending, succeeded, failed), not\n" +
			"their ids, so it may hold millions. Once sealed (a callback, or close) it fires once when\n" +
			"nothing of it is pending: its callbacks are enqueued and the jobs waiting for it\n" +
			"(enqueue --after-group) are released (or failed, when a job of the group failed).",
		Subcommands: []*ucli.Command{
			{Name: "on-complete", Usage: "enqueue a job once every job of GROUP has ended", ArgsUsage: "GROUP",
				Description: cbDesc, Flags: cbFlags(), Action: func(c *ucli.Context) error { return groupSeal(c, "complete") }},
			{Name: "on-success", Usage: "enqueue a job once every job of GROUP has succeeded (never when one failed)", ArgsUsage: "GROUP",
				Description: cbDesc, Flags: cbFlags(), Action: func(c *ucli.Context) error { return groupSeal(c, "success") }},
			{Name: "close", Usage: "seal GROUP without a callback: jobs waiting for it are released once it completes", ArgsUsage: "GROUP",
				Flags: redisFlags(), Action: func(c *ucli.Context) error { return groupSeal(c, "") }},
			{Name: "show", Usage: "GROUP's counters: total, pending, succeeded, failed; sealed, fired", ArgsUsage: "GROUP",
				Flags: append(redisFlags(), &ucli.BoolFlag{Name: "json", Usage: "print JSON"}), Action: groupShow},
		},
	}
}

func groupArg(c *ucli.Context) (string, error) {
	g, err := oneArg(c, "GROUP")
	if err != nil {
		return "", err
	}
	if err := protocol.ValidateDepName("group", g); err != nil {
		return "", usageError{err}
	}
	return g, nil
}

func groupSeal(c *ucli.Context, when string) error {
	g, err := groupArg(c)
	if err != nil {
		return err
	}
	cb := rdb.GroupCallback{When: when}
	if when != "" {
		cb.Queue, cb.Class, cb.ID = c.String("queue"), c.String("class"), protocol.NewJobID()
		if err := protocol.ValidateQueueName(cb.Queue); err != nil {
			return usageError{err}
		}
		args := bytes.TrimSpace([]byte(c.String("args")))
		var list []json.RawMessage
		if err := json.Unmarshal(args, &list); err != nil {
			return usagef("--args must be a JSON array")
		}
		// compacted, numbers exact: the payload's own writer
		p, err := protocol.NewPayload(cb.Class, args, protocol.EnqueueOptions{Plain: true})
		if err != nil {
			return usageError{err}
		}
		v, err := protocol.DecodePayload(p)
		if err != nil {
			return usageError{err}
		}
		cb.Args = v.Args
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	fired, err := client.SealGroup(c.Context, g, cb, time.Now())
	if errors.Is(err, rdb.ErrGroupFired) {
		return usagef("group %q has completed and fired: its counts are final", g)
	}
	if err != nil {
		return err
	}
	if fired {
		fmt.Fprintln(c.App.Writer, "fired")
	} else {
		fmt.Fprintln(c.App.Writer, "registered")
	}
	return nil
}

type groupJSON struct {
	Name      string         `json:"name"`
	Exists    bool           `json:"exists"`
	Total     int64          `json:"total"`
	Pending   int64          `json:"pending"`
	Succeeded int64          `json:"succeeded"`
	Failed    int64          `json:"failed"`
	Sealed    bool           `json:"sealed"`
	Fired     bool           `json:"fired"`
	Outcome   string         `json:"outcome"`
	Callbacks []callbackJSON `json:"callbacks"`
}

type callbackJSON struct {
	When  string          `json:"when"`
	Queue string          `json:"queue"`
	Class string          `json:"class"`
	Args  json.RawMessage `json:"args"`
	ID    string          `json:"id"`
}

func groupShow(c *ucli.Context) error {
	g, err := groupArg(c)
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	s, err := client.Group(c.Context, g)
	if err != nil {
		return err
	}
	out := groupJSON{Name: g, Exists: s.Exists, Total: s.Total, Pending: s.Pending, Succeeded: s.Succeeded,
		Failed: s.Failed, Sealed: s.Sealed, Fired: s.Fired, Outcome: s.Outcome, Callbacks: []callbackJSON{}}
	for _, cb := range s.Callbacks {
		args := json.RawMessage(cb.Args)
		if !json.Valid(args) {
			args = json.RawMessage("[]")
		}
		out.Callbacks = append(out.Callbacks, callbackJSON{When: cb.When, Queue: cb.Queue, Class: cb.Class, Args: args, ID: cb.ID})
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, out)
	}
	if !s.Exists {
		fmt.Fprintf(c.App.Writer, "group %s: no jobs\n", g)
		return nil
	}
	w := c.App.Writer
	fmt.Fprintf(w, "group %s\n  total %d, pending %d, succeeded %d, failed %d\n", g, s.Total, s.Pending, s.Succeeded, s.Failed)
	switch {
	case s.Fired:
		fmt.Fprintf(w, "  fired: %s\n", s.Outcome)
	case s.Sealed:
		fmt.Fprintln(w, "  sealed: fires when nothing is pending")
	default:
		fmt.Fprintln(w, "  open: no callback yet (group on-complete, on-success or close seal it)")
	}
	for _, cb := range out.Callbacks {
		fmt.Fprintf(w, "  on-%s: %s on %s, args %s\n", cb.When, cb.Class, cb.Queue, cb.Args)
	}
	return nil
}
