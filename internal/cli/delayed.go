package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/protocol"
)

func delayedCommand() *ucli.Command {
	jsonFlag := &ucli.BoolFlag{Name: "json", Usage: "print JSON"}
	withRedis := func(extra ...ucli.Flag) []ucli.Flag {
		return append(append(redisFlags(), jsonFlag), extra...)
	}
	// filter flags read no environment variables: a QUEUE set for workers
	// must not narrow (or widen) what an operator removes
	filters := func(extra ...ucli.Flag) []ucli.Flag {
		return withRedis(append([]ucli.Flag{
			&ucli.StringFlag{Name: "from", Usage: "only items due at or after this time (RFC 3339 or Unix seconds)"},
			&ucli.StringFlag{Name: "to", Usage: "only items due at or before this time (RFC 3339 or Unix seconds)"},
			&ucli.StringFlag{Name: "queue", Usage: "only items for this queue"},
			&ucli.StringFlag{Name: "class", Usage: "only items of this class"},
			&ucli.StringFlag{Name: "args", Usage: "only items with exactly these args (JSON; needs --class, and --queue unless --scan)"},
			&ucli.BoolFlag{Name: "scan", Usage: "with --args: read the buckets instead of the timestamps index (also finds items that carry an id)"},
		}, extra...)...)
	}
	return &ucli.Command{
		Name:  "delayed",
		Usage: "inspect, remove and queue now delayed jobs (enqueued with --at/--in, resque-scheduler, node-resque)",
		Description: "The delayed queue is resque-scheduler's: delayed_queue_schedule, one delayed:<ts> list per due\n" +
			"second, and the timestamps:<item> index. Movers and producers can go on meanwhile: remove\n" +
			"and clear delete one item (every copy of it in its bucket) with its index entry in one\n" +
			"atomic step, and take a bucket off the schedule when it is left empty.\n\n" +
			"--args finds items through the timestamps index, as resque-scheduler's remove_delayed does:\n" +
			"at once on any size, for items written with class, args and queue only (resque-scheduler,\n" +
			"node-resque, enqueue --at/--in). Add --scan to compare the args of every item in the time\n" +
			"range instead, which also finds items that carry an id (enqueue --with-id).",
		Subcommands: []*ucli.Command{
			{
				Name: "list", Usage: "the delayed items, oldest first (the order a mover promotes them)", ArgsUsage: " ",
				Flags: filters(
					&ucli.IntFlag{Name: "offset", Usage: "skip this many items"},
					&ucli.IntFlag{Name: "limit", Usage: "show at most this many (0: all)", Value: 100},
				),
				Action: delayedList,
			},
			{Name: "count", Usage: "how many delayed items (and due times) match", ArgsUsage: " ", Flags: filters(), Action: delayedCount},
			{Name: "show", Usage: "the items due at TIME (RFC 3339 or Unix seconds), in promotion order", ArgsUsage: "TIME", Flags: withRedis(), Action: delayedShow},
			{
				Name: "remove", Usage: "delete the delayed items that match (at least one filter)", ArgsUsage: " ",
				Flags: filters(), Action: delayedRemove,
			},
			{
				Name: "queue-now", Usage: "push the delayed item due at TIME that matches to its queue now, as a mover would (--all: every match)", ArgsUsage: "TIME",
				Description: "Moves one item of the bucket due at TIME (RFC 3339 or Unix seconds, as show prints it) to its\n" +
					"queue at once, as resque-web's \"Queue now\" does: the payload a mover pushes when the item is\n" +
					"due, in one atomic step that takes it off the bucket (and the bucket off the schedule when it is\n" +
					"left empty), so it is never both queued and left delayed, nor queued twice with movers running.\n" +
					"The filters pick the item within the bucket; more than one distinct match is an error unless\n" +
					"--all is given. An item no longer there (promoted or removed meanwhile) is an error (exit 1).",
				Flags: withRedis(
					&ucli.StringFlag{Name: "queue", Usage: "only the item for this queue"},
					&ucli.StringFlag{Name: "class", Usage: "only the item of this class"},
					&ucli.StringFlag{Name: "args", Usage: "only the item with exactly these args (JSON; needs --class)"},
					&ucli.StringFlag{Name: "id", Usage: "only the item with this \"id\" (enqueue --with-id)"},
					&ucli.BoolFlag{Name: "all", Usage: "queue every matching item (each copy of an item listed twice), not only one"},
				),
				Action: delayedQueueNow,
			},
			{
				Name: "clear", Usage: "delete every delayed item, its index entries and the schedule", ArgsUsage: "--yes",
				Flags: withRedis(&ucli.BoolFlag{Name: "yes", Usage: "confirm"}), Action: delayedClear,
			},
		},
	}
}

// parseDelayedTime reads RFC 3339 or Unix seconds.
func parseDelayedTime(flag, v string) (time.Time, error) {
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(secs, 0), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, usagef("%s %q: want RFC 3339 (2026-12-01T08:00:00Z) or Unix seconds", flag, v)
	}
	return t, nil
}

// delayedFilter reads the filter flags.
func delayedFilter(c *ucli.Context) (delayed.Filter, error) {
	f := delayed.Filter{Queue: c.String("queue"), Class: c.String("class"), Scan: c.Bool("scan")}
	if c.NArg() > 0 {
		return f, usagef("%s takes no arguments (got %q); filters are flags", c.Command.FullName(), c.Args().First())
	}
	for _, name := range []string{"queue", "class"} {
		if c.IsSet(name) && c.String(name) == "" {
			return f, usagef("--%s is empty", name)
		}
	}
	var err error
	if v := c.String("from"); v != "" {
		if f.From, err = parseDelayedTime("--from", v); err != nil {
			return f, err
		}
	}
	if v := c.String("to"); v != "" {
		if f.To, err = parseDelayedTime("--to", v); err != nil {
			return f, err
		}
	}
	if c.IsSet("args") {
		a := bytes.TrimSpace([]byte(c.String("args")))
		if !json.Valid(a) {
			return f, usagef("--args %q: not valid JSON (want e.g. '[1,\"two\"]')", c.String("args"))
		}
		f.Args = a
	}
	switch {
	case f.Args == nil && f.Scan:
		return f, usagef("--scan goes with --args (the other filters always read the buckets)")
	case f.Args != nil && f.Class == "":
		return f, usagef("--args needs --class")
	case f.Args != nil && !f.Scan && f.Queue == "":
		return f, usagef("--args needs --queue: the timestamps index is keyed by the whole item, queue included (or add --scan to compare the args of every item)")
	}
	return f, nil
}

// delayedErr turns a filter error into a usage error.
func delayedErr(err error) error {
	if errors.Is(err, delayed.ErrBadFilter) {
		return usageError{err}
	}
	return err
}

// indexHint is said when the index found nothing: the item may carry an id.
func indexHint(c *ucli.Context, f delayed.Filter) {
	if f.Args != nil && !f.Scan {
		fmt.Fprintln(c.App.ErrWriter, "nothing found through the timestamps index; items that carry an id (enqueue --with-id) are found with --scan")
	}
}

// delayedJSONItem is an item as --json prints it: due_at_unix is its
// bucket's timestamp as stored (delayed:<ts>), payload the item as stored.
type delayedJSONItem struct {
	DueAt     *string         `json:"due_at"`
	DueAtUnix int64           `json:"due_at_unix"`
	Position  int             `json:"position"`
	Queue     string          `json:"queue,omitempty"`
	Class     string          `json:"class,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Error     string          `json:"error,omitempty"`
	Payload   json.RawMessage `json:"payload"`
}

func toDelayedJSON(it delayed.Item) delayedJSONItem {
	j := delayedJSONItem{DueAt: jsonTime(it.At), DueAtUnix: it.At.Unix(), Position: it.Pos, Queue: it.Queue, Class: it.Class,
		Payload: protocol.EmbedPayload(it.Raw)}
	if it.Err != nil {
		j.Error = it.Err.Error()
	} else if json.Valid(it.Args) {
		j.Args = it.Args
	}
	return j
}

func delayedViews(items []delayed.Item) []delayedJSONItem {
	out := make([]delayedJSONItem, len(items))
	for i, it := range items {
		out[i] = toDelayedJSON(it)
	}
	return out
}

func delayedList(c *ucli.Context) error {
	f, err := delayedFilter(c)
	if err != nil {
		return err
	}
	offset, limit := c.Int("offset"), c.Int("limit")
	if offset < 0 || limit < 0 {
		return usagef("--offset and --limit must not be negative")
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	fetch := limit
	if limit > 0 {
		fetch = limit + 1 // one more says whether there are more
	}
	items, err := delayedio.List(c.Context, client, f, offset, fetch)
	if err != nil {
		return delayedErr(err)
	}
	more := limit > 0 && len(items) > limit
	if more {
		items = items[:limit]
	}
	if len(items) == 0 && offset == 0 {
		indexHint(c, f)
	}
	if c.Bool("json") {
		page := struct {
			listJSON[delayedJSONItem]
			Offset int `json:"offset"`
			Limit  int `json:"limit"`
		}{listOf(delayedViews(items)), offset, limit}
		if more || offset > 0 {
			n, err := delayedio.Count(c.Context, client, f)
			if err != nil {
				return delayedErr(err)
			}
			page.Total = int(n.Items)
		}
		return writeJSON(c.App.Writer, page)
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DUE\tQUEUE\tCLASS\tARGS")
	for _, it := range items {
		class, args := it.Class, string(jsonLine(it.Args))
		if it.Err != nil {
			class, args = "(bad item)", string(it.Raw) // show TIME says what is wrong
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", humanTime(it.At), it.Queue, class, clip(args, 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if more {
		fmt.Fprintf(c.App.ErrWriter, "more items follow: --offset %d for the next ones, --limit 0 for all\n", offset+limit)
	}
	return nil
}

func delayedCount(c *ucli.Context) error {
	f, err := delayedFilter(c)
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	n, err := delayedio.Count(c.Context, client, f)
	if err != nil {
		return delayedErr(err)
	}
	if n.Items == 0 {
		indexHint(c, f)
	}
	if c.Bool("json") {
		// total, as in every list's output: the matching items
		return writeJSON(c.App.Writer, map[string]int64{"total": n.Items, "buckets": n.Buckets})
	}
	fmt.Fprintf(c.App.Writer, "%s in %s\n", plural(n.Items, "item", "items"), plural(n.Buckets, "bucket", "buckets"))
	return nil
}

func delayedShow(c *ucli.Context) error {
	if c.NArg() != 1 {
		return usagef("show needs one TIME (RFC 3339 or Unix seconds), got %d arguments", c.NArg())
	}
	t, err := parseDelayedTime("TIME", c.Args().First())
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	items, err := delayedio.Bucket(c.Context, client, t)
	if err != nil {
		return err
	}
	w := c.App.Writer
	if c.Bool("json") {
		return writeJSON(w, struct {
			listJSON[delayedJSONItem]
			DueAt     *string `json:"due_at"`
			DueAtUnix int64   `json:"due_at_unix"`
		}{listOf(delayedViews(items)), jsonTime(t), t.Unix()})
	}
	if len(items) == 0 {
		fmt.Fprintf(c.App.ErrWriter, "no delayed items due at %s (%d)\n", humanTime(t), t.Unix())
		return nil
	}
	for _, it := range items {
		if it.Err != nil {
			fmt.Fprintf(w, "#%d (bad item: %v)\n", it.Pos, it.Err)
		} else {
			fmt.Fprintf(w, "#%d %s queue=%s\n", it.Pos, it.Class, it.Queue)
		}
		var pretty bytes.Buffer
		if json.Indent(&pretty, it.Raw, "", "  ") == nil {
			fmt.Fprintf(w, "%s\n\n", pretty.Bytes())
		} else {
			fmt.Fprintf(w, "%s\n\n", it.Raw)
		}
	}
	return nil
}

// delayedProgress shows progress on a terminal for long removals.
func delayedProgress(c *ucli.Context) (func(delayed.Progress), func()) {
	if !terminal(c.App.ErrWriter) {
		return nil, func() {}
	}
	shown := false
	return func(p delayed.Progress) {
			if p.Buckets > 100 {
				shown = true
				fmt.Fprintf(c.App.ErrWriter, "\rbucket %d of %d, removed %d items", p.Done, p.Buckets, p.Removed)
			}
		}, func() {
			if shown {
				fmt.Fprint(c.App.ErrWriter, "\r\033[K")
			}
		}
}

func printRemoval(c *ucli.Context, r delayed.Removal, err error) error {
	if err != nil {
		if r.Removed > 0 {
			return fmt.Errorf("%w (%d removed before the error)", delayedErr(err), r.Removed)
		}
		return delayedErr(err)
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, r)
	}
	fmt.Fprintf(c.App.Writer, "removed %s (%s, %s taken off the schedule)\n", plural(r.Removed, "item", "items"),
		plural(r.Unindexed, "index entry", "index entries"), plural(r.Unscheduled, "bucket", "buckets"))
	return nil
}

func delayedRemove(c *ucli.Context) error {
	f, err := delayedFilter(c)
	if err != nil {
		return err
	}
	if f.From.IsZero() && f.To.IsZero() && f.Queue == "" && f.Class == "" {
		return usagef("remove needs a filter (--from, --to, --queue, --class); clear --yes deletes every delayed item")
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	progress, done := delayedProgress(c)
	r, err := delayedio.Remove(c.Context, client, f, progress)
	done()
	if err == nil && r.Removed == 0 {
		indexHint(c, f)
	}
	return printRemoval(c, r, err)
}

func delayedClear(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("clear takes no arguments (got %q)", c.Args().First())
	}
	if !c.Bool("yes") {
		return usagef("clear deletes every delayed item: add --yes to confirm")
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	progress, done := delayedProgress(c)
	r, err := delayedio.Clear(c.Context, client, progress)
	done()
	return printRemoval(c, r, err)
}

// delayedQueueNowJSON is one item queue-now pushed.
type delayedQueueNowJSON struct {
	DueAt       *string         `json:"due_at"`
	DueAtUnix   int64           `json:"due_at_unix"`
	Queue       string          `json:"queue"`
	Unassigned  bool            `json:"unassigned,omitempty"`
	Class       string          `json:"class"`
	Left        int64           `json:"left"`
	Unscheduled bool            `json:"unscheduled"`
	Payload     json.RawMessage `json:"payload"`
}

func delayedQueueNow(c *ucli.Context) error {
	if c.NArg() != 1 {
		return usagef("queue-now needs one TIME (RFC 3339 or Unix seconds, as delayed show prints it), got %d arguments", c.NArg())
	}
	t, err := parseDelayedTime("TIME", c.Args().First())
	if err != nil {
		return err
	}
	f := delayed.Filter{Queue: c.String("queue"), Class: c.String("class")}
	if c.IsSet("args") {
		a := bytes.TrimSpace([]byte(c.String("args")))
		if !json.Valid(a) {
			return usagef("--args %q: not valid JSON (want e.g. '[1,\"two\"]')", c.String("args"))
		}
		if f.Class == "" {
			return usagef("--args needs --class")
		}
		f.Args = a
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	items, err := delayedio.BucketMatching(c.Context, client, t, f)
	if err != nil {
		return delayedErr(err)
	}
	if id := c.String("id"); c.IsSet("id") {
		items = slices.DeleteFunc(items, func(it delayed.Item) bool {
			var v struct {
				ID json.RawMessage `json:"id"`
			}
			return it.Err != nil || json.Unmarshal(it.Raw, &v) != nil || strings.Trim(string(v.ID), `"`) != id
		})
	}
	if len(items) == 0 {
		return fmt.Errorf("no delayed item due at %s (%d) matches: promoted or removed meanwhile, or the filters differ (delayed show %d lists the bucket)",
			humanTime(t), t.Unix(), t.Unix())
	}
	distinct := map[string]bool{}
	for _, it := range items {
		distinct[string(it.Raw)] = true
	}
	if len(distinct) > 1 && !c.Bool("all") {
		return usagef("%d different delayed items due at %s match: narrow with --class, --args, --queue or --id, or add --all to queue them all", len(distinct), humanTime(t))
	}
	if !c.Bool("all") {
		items = items[:1]
	}
	var done []delayedQueueNowJSON
	for _, it := range items {
		r, err := delayedio.QueueNow(c.Context, client, it.At.Unix(), it.Raw, time.Now())
		if errors.Is(err, delayed.ErrNotFound) && len(done) > 0 {
			continue // a copy queued meanwhile (or by a mover)
		}
		if errors.Is(err, delayed.ErrNotFound) {
			return fmt.Errorf("the delayed %s item due at %s is no longer there (promoted or removed meanwhile); nothing was queued", it.Class, humanTime(t))
		}
		if errors.Is(err, delayed.ErrNotJob) {
			return fmt.Errorf("the delayed item #%d due at %s is not a job a mover can promote (%v); delayed remove deletes it", it.Pos, humanTime(t), it.Err)
		}
		if err != nil {
			return err
		}
		done = append(done, delayedQueueNowJSON{DueAt: jsonTime(it.At), DueAtUnix: it.At.Unix(), Queue: r.Queue, Unassigned: r.Unassigned,
			Class: it.Class, Left: r.Left, Unscheduled: r.Unscheduled, Payload: protocol.EmbedPayload(r.Payload)})
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, listOf(done))
	}
	for _, d := range done {
		dest := "queue " + d.Queue
		if d.Unassigned {
			dest = "unassigned (a mass-queue job)"
		}
		fmt.Fprintf(c.App.Writer, "queued %s to %s now (was due %s); %s left in the bucket\n", d.Class, dest, humanTime(t), plural(d.Left, "item", "items"))
	}
	return nil
}
