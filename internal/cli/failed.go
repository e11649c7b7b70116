package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/internal/failureio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

func failedCommand() *ucli.Command {
	filterFlags := []ucli.Flag{
		&ucli.StringFlag{Name: "queue", Usage: "only entries of this queue"},
		&ucli.StringFlag{Name: "class", Usage: "only entries of this job class"},
		&ucli.StringFlag{Name: "exception", Usage: "only entries whose exception contains this"},
		&ucli.BoolFlag{Name: "json", Usage: "print JSON"},
	}
	withRedis := func(extra ...ucli.Flag) []ucli.Flag {
		return append(append(redisFlags(), filterFlags...), extra...)
	}
	yes := func() ucli.Flag {
		return &ucli.BoolFlag{Name: "yes", Usage: "confirm: delete every entry matching the filters"}
	}
	return &ucli.Command{
		Name:  "failed",
		Usage: "inspect, retry and remove failed jobs",
		Description: "Entries are addressed by their index in the failed list (as resque-web shows them).\n" +
			"Every change re-checks the entry's bytes first: if the list moved, the entry is found\n" +
			"again by its content; an entry that is gone is reported, never mistaken for another.",
		Subcommands: []*ucli.Command{
			{
				Name: "list", Usage: "list failed jobs", ArgsUsage: " ",
				Flags: withRedis(
					&ucli.IntFlag{Name: "offset", Usage: "skip this many matching entries"},
					&ucli.IntFlag{Name: "limit", Usage: "show at most this many (0: all)", Value: 50},
				),
				Action: failedList,
			},
			{Name: "show", Usage: "show entries in full", ArgsUsage: "INDEX...", Flags: withRedis(), Action: failedShow},
			{
				Name: "retry", Usage: "requeue entries (Ruby's requeue: retried_at is set, the payload goes back to its queue)", ArgsUsage: "INDEX... | --all",
				Flags:  withRedis(&ucli.BoolFlag{Name: "all", Usage: "every entry matching the filters"}),
				Action: func(c *ucli.Context) error { return failedChange(c, "retry") },
			},
			{
				Name: "remove", Usage: "delete entries", ArgsUsage: "INDEX... | --all --yes",
				Flags:  withRedis(&ucli.BoolFlag{Name: "all", Usage: "every entry matching the filters (with --yes)"}, yes()),
				Action: func(c *ucli.Context) error { return failedChange(c, "remove") },
			},
			{
				Name: "clear", Usage: "delete every entry (or those matching the filters)", ArgsUsage: "--yes",
				Flags: withRedis(yes()),
				Action: func(c *ucli.Context) error {
					if c.NArg() > 0 {
						return usagef("clear takes no index; use remove INDEX")
					}
					if err := confirmDelete(c, "clear"); err != nil {
						return err
					}
					store, done, err := failedStore(c)
					if err != nil {
						return err
					}
					defer done()
					r, err := store.Clear(c.Context, filterOf(c))
					if err != nil {
						return err
					}
					return printResult(c, "removed", r)
				},
			},
		},
	}
}

// confirmDelete refuses a delete of every failed entry (matching the
// filters) without --yes, as queue clear and delayed clear do, saying what
// would go: how many entries when that is one LLEN (no filters).
func confirmDelete(c *ucli.Context, what string) error {
	if c.Bool("yes") {
		return nil
	}
	f := filterOf(c)
	scope := "every failed entry"
	if !f.Empty() {
		var by []string
		for _, kv := range [][2]string{{"queue", f.Queue}, {"class", f.Class}, {"exception", f.Exception}} {
			if kv[1] != "" {
				by = append(by, fmt.Sprintf("--%s %q", kv[0], kv[1]))
			}
		}
		scope += " matching " + strings.Join(by, " ")
	} else if client, err := newClient(c); err == nil {
		if n, err := client.Len(c.Context, client.Keys().Failed()); err == nil {
			scope = fmt.Sprintf("every failed entry (%d now)", n)
		}
		client.Close()
	}
	return usagef("%s deletes %s: add --yes to confirm", what, scope)
}

func filterOf(c *ucli.Context) failure.Filter {
	return failure.Filter{Queue: c.String("queue"), Class: c.String("class"), Exception: c.String("exception")}
}

func failedStore(c *ucli.Context) (*failureio.Store, func(), error) {
	store, _, done, err := failedStoreClient(c)
	return store, done, err
}

func failedStoreClient(c *ucli.Context) (*failureio.Store, *rdb.Client, func(), error) {
	client, err := newClient(c)
	if err != nil {
		return nil, nil, nil, err
	}
	return failureio.New(client, nil), client, func() { client.Close() }, nil
}

// checkRange refuses indexes past the end of the failed list before any
// entry is read, saying how long the list is. (An entry that goes away
// after this check is reported as gone.)
func checkRange(c *ucli.Context, client *rdb.Client, idx []int64) error {
	n, err := client.Len(c.Context, client.Keys().Failed())
	if err != nil {
		return err
	}
	for _, i := range idx {
		switch {
		case i < n:
		case n == 0:
			return usagef("no entry %d: the failed list is empty", i)
		case n == 1:
			return usagef("no entry %d: the failed list has 1 entry (index 0)", i)
		default:
			return usagef("no entry %d: the failed list has %d entries (0-%d)", i, n, n-1)
		}
	}
	return nil
}

func indexes(c *ucli.Context) ([]int64, error) {
	var out []int64
	for _, a := range c.Args().Slice() {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || n < 0 {
			return nil, usagef("%q is not an entry index (0, 1, 2 ...)", a)
		}
		out = append(out, n)
	}
	return out, nil
}

func failedList(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("list takes no argument (use show INDEX)")
	}
	if c.Int("offset") < 0 || c.Int("limit") < 0 {
		return usagef("--offset and --limit must not be negative")
	}
	store, done, err := failedStore(c)
	if err != nil {
		return err
	}
	defer done()
	entries, total, err := store.List(c.Context, filterOf(c), c.Int("offset"), c.Int("limit"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		// total is the length of the failed list: with filters, counting
		// the matches would mean reading all of it.
		page := struct {
			listJSON[failedJSON]
			Offset int `json:"offset"`
			Limit  int `json:"limit"`
		}{listOf(failedViews(entries)), c.Int("offset"), c.Int("limit")}
		page.Total = int(total)
		return writeJSON(c.App.Writer, page)
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INDEX\tFAILED AT\tQUEUE\tCLASS\tEXCEPTION\tERROR\tRETRIED AT")
	for _, e := range entries {
		retried := ""
		if e.RetriedAt != "" {
			retried = humanStored(e.RetriedAt)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Index, humanStored(e.FailedAt), e.Queue, e.Class, e.Exception, clip(e.Error, 60), retried)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "%d shown, %s in the failed list\n", len(entries), plural(total, "entry", "entries"))
	return nil
}

func failedShow(c *ucli.Context) error {
	idx, err := indexes(c)
	if err != nil {
		return err
	}
	if len(idx) == 0 {
		return usagef("show needs at least one INDEX")
	}
	store, client, done, err := failedStoreClient(c)
	if err != nil {
		return err
	}
	defer done()
	if err := checkRange(c, client, idx); err != nil {
		return err
	}
	var entries []failure.Entry
	for _, i := range idx {
		e, err := store.Get(c.Context, i)
		if err != nil {
			return err
		}
		entries = append(entries, e)
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, listOf(failedViews(entries)))
	}
	w := c.App.Writer
	for _, e := range entries {
		fmt.Fprintf(w, "index:        %d\nfailed_at:    %s\nqueue:        %s\nclass:        %s\nexception:    %s\nerror:        %s\nworker:       %s\n",
			e.Index, humanStored(e.FailedAt), e.Queue, e.Class, e.Exception, e.Error, e.Worker)
		if e.ProcessedBy != "" {
			fmt.Fprintf(w, "processed_by: %s\n", e.ProcessedBy)
		}
		if e.RetriedAt != "" {
			fmt.Fprintf(w, "retried_at:   %s (requeued by hand)\n", humanStored(e.RetriedAt))
		}
		if by := retriedBy(e); by != "" {
			fmt.Fprintf(w, "retried_by:   %s (the automatic retry)\n", by)
		}
		fmt.Fprintf(w, "payload:      %s\nbacktrace:\n", e.Payload)
		for _, l := range e.Backtrace {
			fmt.Fprintf(w, "  %s\n", l)
		}
		fmt.Fprintln(w)
	}
	return nil
}

func failedChange(c *ucli.Context, op string) error {
	idx, err := indexes(c)
	if err != nil {
		return err
	}
	all := c.Bool("all")
	if all == (len(idx) > 0) {
		return usagef("%s needs INDEX... or --all (with optional --queue/--class/--exception), not both", op)
	}
	if all && op == "remove" {
		if err := confirmDelete(c, "remove --all"); err != nil {
			return err
		}
	}
	store, client, done, err := failedStoreClient(c)
	if err != nil {
		return err
	}
	defer done()
	if err := checkRange(c, client, idx); err != nil {
		return err
	}
	apply, bulk := store.Retry, store.RetryMatching
	verb := "retried"
	if op == "remove" {
		apply, bulk, verb = store.Remove, store.RemoveMatching, "removed"
	}
	if all {
		r, err := bulk(c.Context, filterOf(c))
		if err != nil {
			return err
		}
		return printResult(c, verb, r)
	}
	// Read every selected entry first: indexes refer to the list as it is
	// now, and removing one must not shift the meaning of the next. Check
	// them all before changing any, and act on each index once.
	var entries []failure.Entry
	seen := map[int64]bool{}
	for _, i := range idx {
		if seen[i] {
			continue
		}
		seen[i] = true
		e, err := store.Get(c.Context, i)
		if err != nil {
			return err
		}
		if f := filterOf(c); !f.Match(e) {
			return usagef("entry %d (%s on %s) does not match the filters", e.Index, e.Class, e.Queue)
		}
		if op == "retry" && !e.Retryable() {
			return fmt.Errorf("entry %d: %w; nothing was retried", e.Index, failure.ErrNotRetryable)
		}
		entries = append(entries, e)
	}
	// An entry that vanished meanwhile does not stop the others; it is
	// reported, and the exit status says so.
	var r failure.Result
	var gone []string
	for _, e := range entries {
		err := apply(c.Context, e)
		switch {
		case err == nil:
			r.Done++
		case errors.Is(err, failure.ErrGone):
			r.Gone++
			gone = append(gone, strconv.FormatInt(e.Index, 10))
		default:
			_ = printResult(c, verb, r)
			return err
		}
	}
	if err := printResult(c, verb, r); err != nil {
		return err
	}
	if len(gone) > 0 {
		return fmt.Errorf("%s: entry %s changed or left the failed list before it could be %s: %w",
			op, strings.Join(gone, ", "), verb, failure.ErrGone)
	}
	return nil
}

func printResult(c *ucli.Context, verb string, r failure.Result) error {
	if c.Bool("json") {
		return writeJSON(c.App.Writer, r)
	}
	msg := fmt.Sprintf("%s %d", verb, r.Done)
	if r.Gone > 0 {
		msg += fmt.Sprintf(", %d gone meanwhile", r.Gone)
	}
	if r.Skipped > 0 {
		msg += fmt.Sprintf(", %d skipped (no queue or payload)", r.Skipped)
	}
	fmt.Fprintln(c.App.Writer, msg)
	return nil
}

// failedJSON is a failed entry as --json prints it. failed_at and
// retried_at are RFC 3339 (null when absent or not readable without
// guessing, e.g. a zone written as "EST"); *_raw are the texts as stored.
// retried_at is set by a requeue (failed retry, resque-web's Retry);
// retried_by names the job an automatic retry enqueued, and is left out
// for "no retry", which resque-v3 and resque-go write on every entry of
// the failed list.
type failedJSON struct {
	Index        int64           `json:"index"`
	FailedAt     *string         `json:"failed_at"`
	FailedAtRaw  string          `json:"failed_at_raw"`
	Queue        string          `json:"queue"`
	Class        string          `json:"class"`
	Exception    string          `json:"exception"`
	Error        string          `json:"error"`
	Backtrace    []string        `json:"backtrace"`
	Worker       string          `json:"worker"`
	ProcessedBy  string          `json:"processed_by,omitempty"`
	RetriedAt    *string         `json:"retried_at"`
	RetriedAtRaw string          `json:"retried_at_raw,omitempty"`
	RetriedBy    string          `json:"retried_by,omitempty"`
	Unreadable   bool            `json:"unreadable,omitempty"`
	Payload      json.RawMessage `json:"payload"`
}

func failedViews(entries []failure.Entry) []failedJSON {
	out := make([]failedJSON, len(entries))
	for i, e := range entries {
		bt := e.Backtrace
		if bt == nil {
			bt = []string{}
		}
		payload := e.Payload
		if payload == nil {
			payload = json.RawMessage("null")
		}
		out[i] = failedJSON{Index: e.Index, FailedAt: jsonTime(storedTime(e.FailedAt)), FailedAtRaw: e.FailedAt,
			Queue: e.Queue, Class: e.Class, Exception: e.Exception, Error: e.Error, Backtrace: bt, Worker: e.Worker,
			ProcessedBy: e.ProcessedBy, RetriedAt: jsonTime(storedTime(e.RetriedAt)), RetriedAtRaw: e.RetriedAt,
			RetriedBy: retriedBy(e), Unreadable: e.Unreadable, Payload: payload}
	}
	return out
}

// retriedBy is the entry's retried_by unless it says "no retry".
func retriedBy(e failure.Entry) string {
	if e.RetriedBy == protocol.RetriedByNoRetry {
		return ""
	}
	return e.RetriedBy
}
