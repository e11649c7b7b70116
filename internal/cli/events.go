package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/rdb"
)

func eventsCommand() *ucli.Command {
	return &ucli.Command{Name: "events", Usage: "read the events stream (jobs' state changes; work --events writes it)",
		Subcommands: []*ucli.Command{eventsTailCommand()}}
}

func eventsTailCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "tail",
		Usage:     "print the newest events, and with --follow those that come",
		UsageText: "resque-go events tail [--follow] [--class CLASS] [--queue QUEUE] [--count N] [--json]",
		Description: "Reads <ns>:resque-go:events, the stream `resque-go work --events` (and `enqueue --events`) writes: one\n" +
			"line an event, oldest first: time, event, class, queue, job id, worker, attempt, duration.\n" +
			"--follow then waits for new events (XREAD BLOCK) until interrupted. --class and --queue\n" +
			"filter (on this side: the stream is read whole). --json prints {\"items\":[...],\"total\":N};\n" +
			"with --follow, one JSON object a line instead.",
		Flags: append(redisFlags(),
			&ucli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "after the newest events, wait for new ones and print them as they come"},
			&ucli.StringFlag{Name: "class", Usage: "only events of jobs of `CLASS`"},
			&ucli.StringFlag{Name: "queue", Usage: "only events of jobs of `QUEUE`"},
			&ucli.IntFlag{Name: "count", Value: 20, Usage: "how many of the newest events to print first (`N`, 0 to 10000)"},
			&ucli.BoolFlag{Name: "json", Usage: "print JSON"},
		),
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usagef("events tail takes no arguments (got %q)", c.Args().First())
			}
			n := c.Int("count")
			if n < 0 || n > 10000 {
				return usagef("--count %d: want 0 to 10000", n)
			}
			client, err := newClient(c)
			if err != nil {
				return err
			}
			defer client.Close()
			f := eventFilter{class: c.String("class"), queue: c.String("queue")}
			return tailEvents(c, client, f, n)
		},
	}
}

// eventFilter keeps the events of one class and/or one queue.
type eventFilter struct{ class, queue string }

func (f eventFilter) keep(e rdb.Event) bool {
	return (f.class == "" || e.Fields["class"] == f.class) && (f.queue == "" || e.Fields["queue"] == f.queue)
}

// tailEvents prints the newest n events that pass f, then, with --follow,
// new ones as they come.
func tailEvents(c *ucli.Context, client *rdb.Client, f eventFilter, n int) error {
	ctx := c.Context
	asJSON, follow := c.Bool("json"), c.Bool("follow")
	last, err := client.LastEventID(ctx)
	if err != nil {
		return err
	}
	var shown []rdb.Event
	if n > 0 {
		// the newest n that pass the filter among the newest 10,000
		if shown, _, err = client.NewestEvents(ctx, f.keep, n, 10000); err != nil {
			return err
		}
	}
	w := c.App.Writer
	if asJSON && !follow {
		items := make([]eventJSON, 0, len(shown))
		for _, e := range shown {
			items = append(items, toEventJSON(e))
		}
		return writeJSON(w, listOf(items))
	}
	for _, e := range shown {
		if err := printEvent(w, e, asJSON); err != nil {
			return err
		}
	}
	if !follow {
		return nil
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	for ctx.Err() == nil {
		evs, err := client.WaitEvents(ctx, last, 1000, 5*time.Second)
		if err != nil {
			if ctx.Err() != nil {
				return nil // interrupted: a clean end
			}
			return err
		}
		for _, e := range evs {
			last = e.StreamID
			if f.keep(e) {
				if err := printEvent(w, e, asJSON); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// eventJSON is one event as --json prints it.
type eventJSON struct {
	StreamID   string  `json:"stream_id"`
	Time       *string `json:"time"`
	Event      string  `json:"event"`
	ID         string  `json:"id"`
	Class      string  `json:"class"`
	Queue      string  `json:"queue"`
	Worker     string  `json:"worker"`
	Attempt    int     `json:"attempt"`
	DurationMS int64   `json:"duration_ms"`
}

// eventTime is when the stream took e (its id's milliseconds).
func eventTime(e rdb.Event) time.Time {
	ms, _, _ := strings.Cut(e.StreamID, "-")
	n, _ := strconv.ParseInt(ms, 10, 64)
	return time.UnixMilli(n)
}

func toEventJSON(e rdb.Event) eventJSON {
	f := e.Fields
	attempt, _ := strconv.Atoi(f["attempt"])
	d, _ := strconv.ParseInt(f["duration_ms"], 10, 64)
	return eventJSON{StreamID: e.StreamID, Time: jsonTime(eventTime(e)), Event: f["event"], ID: f["id"], Class: f["class"],
		Queue: f["queue"], Worker: f["worker"], Attempt: attempt, DurationMS: d}
}

// printEvent prints e as one line of text, or one JSON object.
func printEvent(w io.Writer, e rdb.Event, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(toEventJSON(e))
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	f := e.Fields
	line := fmt.Sprintf("%s  %-11s %s  queue=%s  id=%s", eventTime(e).UTC().Format("2006-01-02T15:04:05.000Z"),
		f["event"], f["class"], f["queue"], f["id"])
	if f["worker"] != "" {
		line += "  worker=" + f["worker"]
	}
	if a := f["attempt"]; a != "" && a != "0" {
		line += "  attempt=" + a
	}
	if d, _ := strconv.ParseInt(f["duration_ms"], 10, 64); d > 0 {
		line += "  duration=" + (time.Duration(d) * time.Millisecond).String()
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// writeJobEvents prints the events of job id still in the stream, oldest
// first, one line each (the job commands share it); none prints a line
// saying so.
func writeJobEvents(ctx context.Context, w io.Writer, client *rdb.Client, id string) error {
	evs, err := client.JobEvents(ctx, id)
	if err != nil {
		return err
	}
	if len(evs) == 0 {
		_, err := fmt.Fprintln(w, "no events (events off when it ran, or trimmed since)")
		return err
	}
	for _, e := range evs {
		if err := printEvent(w, e, false); err != nil {
			return err
		}
	}
	return nil
}
