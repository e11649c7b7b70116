package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/uniqueio"
	"github.com/resque-go/resque-go/unique"
)

func uniqueCommand() *ucli.Command {
	flags := func() []ucli.Flag {
		return append(redisFlags(), &ucli.BoolFlag{Name: "json", Usage: "print JSON"})
	}
	return &ucli.Command{
		Name:  "unique",
		Usage: "inspect and free unique job ids (unique:<uid>:state, unique:<uid>:deferred)",
		Description: "A uid is queued or running while a job enqueued with --unique-id waits or runs; a\n" +
			"deferred job is one parked until that job succeeds. Workers keep these right on their\n" +
			"own (a dead worker's job is requeued as queued; a uid whose running job has no live\n" +
			"worker is freed by a sweep after 5 minutes). clear is for the rest.",
		Subcommands: []*ucli.Command{
			{Name: "list", Usage: "every uid with a state", ArgsUsage: " ", Flags: flags(), Action: uniqueList},
			{Name: "show", Usage: "one uid's state and deferred job", ArgsUsage: "UID", Flags: flags(), Action: uniqueShow},
			{
				Name: "clear", Usage: "free UID: delete its state; a deferred job is released (enqueued), not dropped", ArgsUsage: "UID",
				Description: "A job with that uid still queued or running is left alone: it runs, and a new job\n" +
					"with the uid can be enqueued meanwhile.",
				Flags: flags(), Action: uniqueClear,
			},
		},
	}
}

type uniqueRow struct {
	UID      string          `json:"uid"`
	State    string          `json:"state"`
	Deferred json.RawMessage `json:"deferred"`
	Problem  string          `json:"problem,omitempty"`
}

func uniqueRowOf(in unique.Info) uniqueRow {
	r := uniqueRow{UID: in.UID, State: in.State, Deferred: json.RawMessage("null"), Problem: in.Problem}
	if in.Deferred != nil {
		if json.Valid(in.Deferred) {
			r.Deferred = in.Deferred
		} else {
			r.Deferred, _ = json.Marshal(string(in.Deferred))
		}
	}
	return r
}

func uniqueArg(c *ucli.Context) (string, error) {
	if c.NArg() != 1 || c.Args().First() == "" {
		return "", usagef("%s takes one UID", c.Command.FullName())
	}
	return c.Args().First(), nil
}

func uniqueList(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("unique list takes no argument (use unique show UID)")
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	infos, err := uniqueio.List(c.Context, client)
	if err != nil {
		return err
	}
	rows := make([]uniqueRow, 0, len(infos))
	for _, in := range infos {
		rows = append(rows, uniqueRowOf(in))
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, listOf(rows))
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "UID\tSTATE\tDEFERRED")
	for _, r := range rows {
		d := "-"
		if string(r.Deferred) != "null" {
			d = clip(string(r.Deferred), 80)
		}
		state := r.State
		if r.Problem != "" {
			state = "unreadable: " + r.Problem
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.UID, state, d)
	}
	return tw.Flush()
}

func uniqueShow(c *ucli.Context) error {
	uid, err := uniqueArg(c)
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	in, err := uniqueio.Get(c.Context, client, uid)
	if err != nil {
		return err
	}
	r := uniqueRowOf(in)
	if c.Bool("json") {
		return writeJSON(c.App.Writer, r)
	}
	state := r.State
	if state == "" {
		state = "free (no state)"
	}
	fmt.Fprintf(c.App.Writer, "uid:      %s\nstate:    %s\n", r.UID, state)
	if string(r.Deferred) == "null" {
		fmt.Fprintln(c.App.Writer, "deferred: none")
		return nil
	}
	fmt.Fprintln(c.App.Writer, "deferred:")
	return writeJSON(c.App.Writer, r.Deferred)
}

func uniqueClear(c *ucli.Context) error {
	uid, err := uniqueArg(c)
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	res, err := uniqueio.Clear(c.Context, client, uid, "resque-go unique clear", time.Now())
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]string{"uid": uid, "result": string(res)})
	}
	switch res {
	case unique.ClearAbsent:
		fmt.Fprintf(c.App.Writer, "%s: already free\n", uid)
	case unique.ClearReleased:
		fmt.Fprintf(c.App.Writer, "%s: freed; its deferred job was released\n", uid)
	default:
		fmt.Fprintf(c.App.Writer, "%s: freed\n", uid)
	}
	return nil
}
