package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"
	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

func queueCommand() *ucli.Command {
	jsonFlag := &ucli.BoolFlag{Name: "json", Usage: "print JSON"}
	withRedis := func(extra ...ucli.Flag) []ucli.Flag {
		return append(append(redisFlags(), jsonFlag), extra...)
	}
	return &ucli.Command{
		Name:  "queue",
		Usage: "inspect queues and remove waiting jobs",
		Description: "Workers and producers can go on meanwhile: peek takes nothing, remove deletes only\n" +
			"matching jobs that were queued when it began, in small atomic steps, and never moves\n" +
			"or deletes any other job.",
		Subcommands: []*ucli.Command{
			{Name: "list", Aliases: []string{"sizes"}, Usage: "every known queue (the queues set) with its length, by name", ArgsUsage: " ",
				Flags: withRedis(), Action: queueList},
			{Name: "size", Usage: "the number of jobs waiting in QUEUE", ArgsUsage: "QUEUE", Flags: withRedis(), Action: queueSize},
			{
				Name: "peek", Usage: "show jobs of QUEUE without taking them (0 is the next one a worker takes)", ArgsUsage: "QUEUE",
				Flags: withRedis(
					&ucli.IntFlag{Name: "offset", Usage: "skip this many jobs"},
					&ucli.IntFlag{Name: "limit", Usage: "show at most this many (0: all)", Value: 10},
				),
				Action: queuePeek,
			},
			{
				Name: "remove", Usage: "delete the jobs of QUEUE of a class (and id, or args)", ArgsUsage: "QUEUE --class CLASS [--id ID | --args JSON]",
				Description: "--args takes a JSON array or object. An array matches jobs whose args array is equal to it.\n" +
					"An object matches jobs whose args object holds each of its keys with an equal value\n" +
					"(resque-v3), or whose args array is one such object (php-resque).",
				Flags: withRedis(
					&ucli.StringFlag{Name: "class", Usage: "job class (required)"},
					&ucli.StringFlag{Name: "id", Usage: "only the job with this id"},
					&ucli.StringFlag{Name: "args", Usage: "only jobs with these args (JSON array: equal; JSON object: these keys)"},
				),
				Action: queueRemove,
			},
			{
				Name: "pause", Usage: "stop every worker taking jobs from QUEUE (running jobs finish)", ArgsUsage: "QUEUE",
				Description: "Within a second every resque-go worker stops claiming from QUEUE; its other queues go on,\n" +
					"jobs already running finish, and jobs can still be enqueued. It sets <ns>:pause:queue:QUEUE\n" +
					"to \"true\", the key resque-pause and resque-queue-control use, so Ruby workers with those\n" +
					"plugins stop too, and a queue they paused is paused here.",
				Flags: withRedis(), Action: queuePause(true),
			},
			{
				Name: "resume", Usage: "let workers take jobs from a paused QUEUE again", ArgsUsage: "QUEUE",
				Flags: withRedis(), Action: queuePause(false),
			},
			{
				Name: "locks", Usage: "the held locks of serial queues, with the worker running a job of each", ArgsUsage: " ",
				Description: "A lock no registered worker holds is stale: its holder died, and it lasts until it expires\n" +
					"(or for ever, when set by hand without an expiry); queue unlock releases it.",
				Flags: withRedis(), Action: queueLocks,
			},
			{
				Name: "unlock", Usage: "release the serial lock of QUEUE while --token still holds it", ArgsUsage: "QUEUE --token TOKEN",
				Description: "Nothing is done when the lock was released, expired or taken again meanwhile (exit 1).\n" +
					"Releasing the lock of a job still running lets a second job of the queue run beside it.",
				Flags: withRedis(&ucli.StringFlag{Name: "token", Usage: "the lock's token, as queue locks shows it (required)"}), Action: queueUnlock,
			},
			{
				Name: "limits", Usage: "list the concurrency caps and rate limits in use: running, parked and waiting jobs", ArgsUsage: " ",
				Description: "Every cap (--limit) and rate (--rate) workers have used, by name (class:CLASS,\n" +
					"queue:QUEUE, class:CLASS[PATH]=VALUE): its running jobs' holds, the slots worker processes\n" +
					"hold as leases (their jobs take no hold of their own), the jobs parked until a slot is free\n" +
					"and the jobs waiting for their moment under a rate (docs/limits.md).",
				Flags: withRedis(), Action: queueLimits,
			},
			{
				Name: "clear", Usage: "delete every job of QUEUE (it stays in the queues set)", ArgsUsage: "QUEUE --yes",
				Flags:  withRedis(&ucli.BoolFlag{Name: "yes", Usage: "confirm"}),
				Action: queueClear,
			},
		},
	}
}

// queueArg is the one QUEUE argument of c.
func queueArg(c *ucli.Context) (string, error) {
	switch {
	case c.NArg() == 0:
		return "", usagef("%s needs a QUEUE", c.Command.FullName())
	case c.NArg() > 1:
		return "", usagef("%s takes one QUEUE, got %d arguments", c.Command.FullName(), c.NArg())
	case c.Args().First() == "":
		return "", usagef("%s: the queue name is empty", c.Command.FullName())
	}
	return c.Args().First(), nil
}

func queueList(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("list takes no argument (use size QUEUE)")
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	names, err := client.KnownQueues(c.Context)
	if err != nil {
		return err
	}
	slices.Sort(names)
	// a queue key of another type does not hide the others: its row says so
	lens, err := client.QueueLens(c.Context, names)
	bad, _ := rdb.BadKeys(err)
	if err != nil && bad == nil {
		return err
	}
	problems := map[string]string{}
	for _, p := range bad {
		problems[p.Key] = p.Problem
	}
	paused, err := client.QueuesPaused(c.Context, names)
	if err != nil {
		return err
	}
	type row struct {
		Name    string `json:"name"`
		Size    int64  `json:"size"`
		Paused  bool   `json:"paused"`
		Problem string `json:"problem,omitempty"`
	}
	rows := make([]row, len(names))
	for i, q := range names {
		rows[i] = row{q, lens[i], paused[i], problems[client.Keys().Queue(q)]}
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, listOf(rows))
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tSIZE")
	for _, r := range rows {
		state := ""
		if r.Paused {
			state = "\tpaused"
		}
		if r.Problem != "" {
			fmt.Fprintf(tw, "%s\t?\t(%s %s)%s\n", r.Name, client.Keys().Queue(r.Name), r.Problem, state)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d%s\n", r.Name, r.Size, state)
	}
	return tw.Flush()
}

// queuePause sets (pause) or deletes QUEUE's pause key.
func queuePause(pause bool) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		q, err := queueArg(c)
		if err != nil {
			return err
		}
		client, err := newClient(c)
		if err != nil {
			return err
		}
		defer client.Close()
		changed := true // pausing a paused queue changes nothing, and is not an error
		if pause {
			err = client.PauseQueue(c.Context, q)
		} else {
			changed, err = client.ResumeQueue(c.Context, q)
		}
		if err != nil {
			return err
		}
		if c.Bool("json") {
			return writeJSON(c.App.Writer, map[string]any{"queue": q, "paused": pause})
		}
		switch {
		case pause:
			fmt.Fprintf(c.App.Writer, "queue %s paused\n", q)
		case changed:
			fmt.Fprintf(c.App.Writer, "queue %s resumed\n", q)
		default:
			fmt.Fprintf(c.App.Writer, "queue %s was not paused\n", q)
		}
		return nil
	}
}

func queueSize(c *ucli.Context) error {
	q, err := queueArg(c)
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	n, err := client.Len(c.Context, client.Keys().Queue(q))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"queue": q, "size": n})
	}
	fmt.Fprintln(c.App.Writer, n)
	return nil
}

func queuePeek(c *ucli.Context) error {
	q, err := queueArg(c)
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
	stop := -1
	if limit > 0 {
		stop = offset + limit - 1
	}
	jobs, err := client.List(c.Context, client.Keys().Queue(q), offset, stop)
	if err != nil {
		return err
	}
	w := c.App.Writer
	if c.Bool("json") {
		total, err := client.Len(c.Context, client.Keys().Queue(q))
		if err != nil {
			return err
		}
		return writeJSON(w, peekJSON(q, offset, limit, total, jobs))
	}
	for i, raw := range jobs {
		fmt.Fprintln(w, peekHeader(offset+i, raw))
		var pretty bytes.Buffer
		if json.Indent(&pretty, raw, "", "  ") == nil {
			fmt.Fprintf(w, "%s\n\n", pretty.Bytes())
		} else {
			fmt.Fprintf(w, "%s\n\n", raw)
		}
	}
	return nil
}

// peekedJob is one job of queue peek --json: its position (0 is the next
// one a worker takes), class and id when it has them, and its payload as
// stored (a JSON string when it is not JSON).
type peekedJob struct {
	Position int             `json:"position"`
	Class    string          `json:"class,omitempty"`
	ID       string          `json:"id,omitempty"`
	Error    string          `json:"error,omitempty"`
	Payload  json.RawMessage `json:"payload"`
}

// peekPage is queue peek --json: a page of the queue; total is the queue's
// length.
type peekPage struct {
	listJSON[peekedJob]
	Queue  string `json:"queue"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

func peekJSON(q string, offset, limit int, total int64, jobs [][]byte) peekPage {
	items := make([]peekedJob, len(jobs))
	for i, raw := range jobs {
		j := peekedJob{Position: offset + i, Payload: jsonLine(raw)}
		if p, err := protocol.DecodePayload(raw); err != nil {
			j.Error = "not a job a worker would run: " + err.Error()
		} else {
			j.Class, j.ID = p.Class, p.ID
		}
		items[i] = j
	}
	page := peekPage{listJSON: listOf(items), Queue: q, Offset: offset, Limit: limit}
	page.Total = int(total)
	return page
}

// peekHeader names a job: its position, class and id when it has them.
func peekHeader(pos int, raw []byte) string {
	p, err := protocol.DecodePayload(raw)
	if err != nil {
		return fmt.Sprintf("#%d (not a job a worker would run: %v)", pos, err)
	}
	h := fmt.Sprintf("#%d %s", pos, p.Class)
	if p.ID != "" {
		h += " id=" + p.ID
	}
	return h
}

// jsonLine is a payload on one line: compacted JSON (numbers and key order
// as stored), or a JSON string holding text that is not JSON.
func jsonLine(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.Bytes()
	}
	return protocol.MarshalString(string(raw))
}

func queueRemove(c *ucli.Context) error {
	q, err := queueArg(c)
	if err != nil {
		return err
	}
	m := rdb.JobMatch{Class: c.String("class"), ID: c.String("id")}
	if m.Class == "" {
		return usagef("remove needs --class (with --id or --args to narrow it)")
	}
	if c.IsSet("id") && c.IsSet("args") {
		return usagef("remove takes --id or --args, not both")
	}
	if c.IsSet("id") && m.ID == "" {
		return usagef("--id is empty")
	}
	if c.IsSet("args") {
		a := bytes.TrimSpace([]byte(c.String("args")))
		if !json.Valid(a) || len(a) == 0 || (a[0] != '[' && a[0] != '{') {
			return usagef("--args %q: want a JSON array or object, e.g. '[1,\"two\"]' or '{\"key\":\"value\"}'", c.String("args"))
		}
		m.Args = a
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	opt := rdb.RemoveOptions{}
	if terminal(c.App.ErrWriter) {
		opt.Progress = func(p rdb.RemoveProgress) {
			if p.Total > rdb.DefaultRemoveChunk {
				fmt.Fprintf(c.App.ErrWriter, "\rexamined %d of %d jobs, removed %d", p.Examined, p.Total, p.Removed)
			}
		}
	}
	n, err := client.RemoveJobs(c.Context, q, m, opt)
	if opt.Progress != nil {
		fmt.Fprint(c.App.ErrWriter, "\r\033[K")
	}
	if errors.Is(err, rdb.ErrBadMatch) {
		return usageError{err}
	}
	if err != nil {
		if n > 0 {
			return fmt.Errorf("%w (%d removed before the error)", err, n)
		}
		return err
	}
	return printQueueResult(c, q, n)
}

func queueClear(c *ucli.Context) error {
	q, err := queueArg(c)
	if err != nil {
		return err
	}
	if !c.Bool("yes") {
		return usagef("clear deletes every job of queue %q: add --yes to confirm", q)
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	n, err := client.ClearQueue(c.Context, q)
	if err != nil {
		return err
	}
	return printQueueResult(c, q, n)
}

func printQueueResult(c *ucli.Context, q string, n int64) error {
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"queue": q, "removed": n})
	}
	fmt.Fprintf(c.App.Writer, "removed %d\n", n)
	return nil
}

// terminal reports whether w is a terminal (progress lines go only there).
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

func queueLimits(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("%s takes no arguments, got %d", c.Command.FullName(), c.NArg())
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	now := time.Now()
	limits, err := client.Limits(c.Context, now)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		type item struct {
			Name      string    `json:"name"`
			Running   int       `json:"running"`
			Leased    int       `json:"leased"`
			Parked    int       `json:"parked"`
			Waiting   int       `json:"waiting"`
			NextStart time.Time `json:"next_start,omitzero"`
			Problem   string    `json:"problem,omitempty"`
		}
		items := make([]item, 0, len(limits))
		for _, l := range limits {
			it := item{Name: l.Name, Running: l.Holders - l.Leased, Leased: l.Leased, Parked: l.Parked, Waiting: l.Waiting, Problem: l.Problem}
			if l.NextStart.After(now) {
				it.NextStart = l.NextStart
			}
			items = append(items, it)
		}
		return writeJSON(c.App.Writer, map[string]any{"items": items, "total": len(items)})
	}
	if len(limits) == 0 {
		fmt.Fprintln(c.App.Writer, "no limit in use")
		return nil
	}
	for _, l := range limits {
		fmt.Fprintf(c.App.Writer, "%s: %d running, %d parked, %d waiting", l.Name, l.Holders-l.Leased, l.Parked, l.Waiting)
		if l.Leased > 0 {
			fmt.Fprintf(c.App.Writer, ", %d slots leased", l.Leased)
		}
		if l.Problem != "" {
			fmt.Fprintf(c.App.Writer, "  (%s)", l.Problem)
		}
		fmt.Fprintln(c.App.Writer)
	}
	return nil
}
