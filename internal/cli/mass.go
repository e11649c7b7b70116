package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
	"github.com/resque-go/resque-go/stats"
)

// massCommand is `resque-go mass ...`: mass queues (docs/massqueue.md).
func massCommand() *ucli.Command {
	withJSON := func(fs ...ucli.Flag) []ucli.Flag {
		return append(append(redisFlags(), fs...), &ucli.BoolFlag{Name: "json", Usage: "print JSON"})
	}
	source := func() ucli.Flag {
		return &ucli.StringFlag{Name: "source", Usage: "source id (the payload's sourceId, a tenant)", Required: true}
	}
	config := func() ucli.Flag {
		return &ucli.StringFlag{Name: "config", Usage: "config file with node_id, pools and mapping (resqu-server's config.yml, or a pool file holding them)",
			EnvVars: []string{"RESQUE_MASS_CONFIG", "RESQUE_POOL_CONFIG"}}
	}
	ttl := &ucli.DurationFlag{Name: "ttl", Usage: "how long an uncommitted batch lives after its last push", Value: massqueue.DefaultBatchTTL}
	return &ucli.Command{
		Name:  "mass",
		Usage: "mass queues: sources routed to pools, static jobs, batches (mass actions), fairness settings",
		Description: "Work is routed by source (the payload's sourceId) and job name to named pools: static\n" +
			"jobs one by one (served round-robin between sources, weighted, with per-source limits),\n" +
			"batches worked by the units of a batch pool (one active batch per source per pool).\n" +
			"A paused source stops in both. The keys are resqu-client's: PHP producers and these\n" +
			"commands fill the same queues.",
		Subcommands: []*ucli.Command{
			{
				Name: "route", Usage: "send a source's job name (or all its jobs) to a pool, overriding the config mapping (src:<s>:cfg:<j>)",
				ArgsUsage: " ",
				Flags: append(redisFlags(), source(),
					&ucli.StringFlag{Name: "name", Usage: "job name (default: every job of the source)", Value: massqueue.Default},
					&ucli.StringFlag{Name: "pool", Usage: "pool name"},
					&ucli.BoolFlag{Name: "remove", Usage: "remove the override"}),
				Action: massRoute,
			},
			{Name: "routes", Usage: "the src: overrides and (with --config) the config mapping", ArgsUsage: " ", Flags: withJSON(config()), Action: massRoutes},
			{
				Name: "enqueue", Usage: "enqueue a static job (LPUSH unassigned)", ArgsUsage: " ",
				Flags: withJSON(source(),
					&ucli.StringFlag{Name: "name", Usage: "job name", Required: true},
					&ucli.StringFlag{Name: "class", Usage: "job class", Required: true},
					&ucli.StringFlag{Name: "args", Usage: "arguments, JSON object or array"},
					&ucli.StringFlag{Name: "unique-id", Usage: "make the job unique under `UID`: refused with exit code 3 while a job with it is queued or running"},
					&ucli.Int64Flag{Name: "deferrable-by", Usage: "with --unique-id: when the uid's job is running, park this job and route it `SECONDS` after that job succeeds (exit 0, \"deferred\" on stderr)"}),
				Action: massEnqueue,
			},
			{
				Name: "batch", Usage: "build and commit a batch",
				Subcommands: []*ucli.Command{
					{
						Name: "create", Usage: "reserve a new batch id and print it (<source>:<name>:<8 hex>); the reservation lasts --ttl until the first push", ArgsUsage: " ",
						Flags:  withJSON(source(), &ucli.StringFlag{Name: "name", Usage: "job name", Required: true}, ttl),
						Action: massBatchCreate,
					},
					{
						Name: "push", Usage: "push a job (--class, --args) or JSON lines from stdin to batch ID", ArgsUsage: "ID",
						Description: "Each stdin line is a JSON object {\"class\":...,\"args\":...} (optional \"name\",\n" +
							"\"sourceId\", \"unique\"); progress goes to stderr on a terminal. A unique job whose uid\n" +
							"is queued or running is refused (exit code 3): the push stops there; every line before\n" +
							"the one named is in the batch, it and the lines after it are not.",
						Flags: withJSON(&ucli.StringFlag{Name: "class", Usage: "job class (else read JSON lines from stdin)"},
							&ucli.StringFlag{Name: "args", Usage: "arguments, JSON object or array"},
							&ucli.StringFlag{Name: "unique-id", Usage: "make the job unique under `UID`: refused with exit code 3 while a job with it is queued or running"}, ttl),
						Action: massBatchPush,
					},
					{Name: "commit", Usage: "commit batch ID: the allocators hand it to a unit", ArgsUsage: "ID", Flags: withJSON(), Action: massBatchCommit},
				},
			},
			{Name: "status", Usage: "pools, units, batches with remaining sizes, sources' active batches and backlogs, static jobs waiting", ArgsUsage: " ",
				Flags: withJSON(config(), &ucli.DurationFlag{Name: "dead-after", Usage: "a unit silent this long is dead", Value: 30 * time.Second}), Action: massStatus},
			{Name: "failures", Usage: "batches and static jobs that could not be placed (batch:allocation_failures)", ArgsUsage: " ", Flags: withJSON(), Action: massFailures},
			{Name: "reallocate", Usage: "give allocation failure ID (a batch id or a job id), or --all, another try", ArgsUsage: "ID | --all",
				Flags: withJSON(&ucli.BoolFlag{Name: "all", Usage: "every allocation failure"}), Action: massReallocate},
			{Name: "weight", Usage: "a source's share of its pools (jobs per turn, default 1; in a batch pool, claims of its batch in a row)", ArgsUsage: " ",
				Flags: withJSON(source(), &ucli.IntFlag{Name: "weight", Usage: "jobs per turn, >= 1", Required: true}), Action: massWeight},
			{Name: "limit", Usage: "at most N jobs of a source running at once in each pool, static or batch, across hosts (0: no limit)", ArgsUsage: " ",
				Flags: withJSON(source(), &ucli.IntFlag{Name: "concurrency", Usage: "N; 0 removes the limit", Required: true}), Action: massLimit},
			{Name: "pause", Usage: "stop claiming a source's jobs, static and batch (running ones finish; its active batches are parked off their units)", ArgsUsage: " ",
				Flags: withJSON(source()), Action: massPause},
			{Name: "resume", Usage: "claim a paused source's jobs again (its parked batches go back to their units, or to a live unit)", ArgsUsage: " ",
				Flags: withJSON(source(), config(), &ucli.DurationFlag{Name: "dead-after", Usage: "a unit silent this long is dead", Value: 30 * time.Second}), Action: massResume},
			{Name: "settings", Usage: "sources with a weight, limit or pause", ArgsUsage: " ", Flags: withJSON(), Action: massSettings},
		},
	}
}

func noArgs(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("%s takes no argument (got %q)", c.Command.FullName(), c.Args().First())
	}
	return nil
}

// noArgsClient is noArgs, then the client of the command's Redis flags.
func noArgsClient(c *ucli.Context) (*rdb.Client, error) {
	if err := noArgs(c); err != nil {
		return nil, err
	}
	return newClient(c)
}

func oneArg(c *ucli.Context, what string) (string, error) {
	if c.NArg() != 1 || c.Args().First() == "" {
		return "", usagef("%s takes one %s", c.Command.FullName(), what)
	}
	return c.Args().First(), nil
}

// massConfigClient reads --config (nil when not given) and opens the
// client.
func massConfigClient(c *ucli.Context) (*massqueue.Config, *rdb.Client, error) {
	cfg, err := massConfig(c)
	if err != nil {
		return nil, nil, err
	}
	client, err := newClient(c)
	if err != nil {
		return nil, nil, err
	}
	return cfg, client, nil
}

// massConfig reads --config; nil when it is not given.
func massConfig(c *ucli.Context) (*massqueue.Config, error) {
	path := c.String("config")
	if path == "" {
		return nil, nil
	}
	host, _ := os.Hostname()
	cfg, err := massqueue.LoadConfig(path, host)
	if err != nil {
		return nil, usageError{err}
	}
	return cfg, nil
}

// massUsage turns the massqueue errors caused by input into usage errors.
func massUsage(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range []string{"bad source id", "must not be empty", "is empty", "contains ':'", "weight", "not valid JSON", "is not <sourceId>"} {
		if strings.Contains(msg, s) {
			return usageError{err}
		}
	}
	return err
}

func massRoute(c *ucli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	pool := c.String("pool")
	if c.Bool("remove") == (pool != "") {
		return usagef("mass route needs --pool P or --remove (not both)")
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	if err := massUsage(massio.SetRoute(c.Context, client, c.String("source"), c.String("name"), pool)); err != nil {
		return err
	}
	key := "src:" + c.String("source") + ":cfg:" + c.String("name")
	if pool == "" {
		fmt.Fprintf(c.App.Writer, "removed %s\n", key)
	} else {
		fmt.Fprintf(c.App.Writer, "%s = %s\n", key, pool)
	}
	return nil
}

func massRoutes(c *ucli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	cfg, client, err := massConfigClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	rs, err := massio.Routes(c.Context, client, cfg)
	if err != nil {
		return err
	}
	if rs == nil {
		rs = []massqueue.Route{}
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, listOf(rs))
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tSOURCE\tJOB\tPOOL\tFROM\tPROBLEM")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", dash(string(r.Kind)), r.Source, r.Job, r.Pool, r.From, dash(r.Problem))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func massEnqueue(c *ucli.Context) error {
	client, err := noArgsClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	j := massqueue.Job{Class: c.String("class"), Source: c.String("source"),
		Name: c.String("name"), Args: []byte(c.String("args")), UniqueID: c.String("unique-id")}
	if c.IsSet("deferrable-by") {
		if j.UniqueID == "" {
			return usageError{errors.New("--deferrable-by needs --unique-id")}
		}
		if j.DeferrableBy = c.Int64("deferrable-by"); j.DeferrableBy < 0 {
			return usageError{fmt.Errorf("--deferrable-by %d: want seconds, 0 or more", j.DeferrableBy)}
		}
		j.Deferrable = true
	}
	e, err := massio.EnqueueStaticJob(c.Context, client, j)
	if err != nil {
		return massUsage(err)
	}
	if e.Deferred {
		fmt.Fprintf(c.App.ErrWriter, "deferred: the job with unique id %q is running; this one is routed %ds after it succeeds\n", j.UniqueID, j.DeferrableBy)
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"id": e.ID, "source": c.String("source"), "name": c.String("name"), "deferred": e.Deferred})
	}
	fmt.Fprintln(c.App.Writer, e.ID)
	return nil
}

func massBatchCreate(c *ucli.Context) error {
	client, err := noArgsClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	id, err := massio.CreateBatch(c.Context, client, c.String("source"), c.String("name"), c.Duration("ttl"))
	if err != nil {
		return massUsage(err)
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]string{"id": id})
	}
	fmt.Fprintln(c.App.Writer, id)
	return nil
}

// batchLine is a JSON line of `mass batch push`.
type batchLine struct {
	Class  string          `json:"class"`
	Args   json.RawMessage `json:"args"`
	Name   string          `json:"name"`
	Source string          `json:"sourceId"`
	Unique *struct {
		UID          string `json:"uid"`
		DeferrableBy *int64 `json:"deferrableBy"`
	} `json:"unique"`
}

func (l batchLine) job() massqueue.Job {
	j := massqueue.Job{Class: l.Class, Args: l.Args, Name: l.Name, Source: l.Source}
	if l.Unique != nil {
		j.UniqueID = l.Unique.UID
		if l.Unique.DeferrableBy != nil {
			j.Deferrable, j.DeferrableBy = true, *l.Unique.DeferrableBy
		}
	}
	return j
}

func massBatchPush(c *ucli.Context) error {
	id, err := oneArg(c, "batch ID")
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	b, err := massio.OpenBatch(client, id, c.Duration("ttl"))
	if err != nil {
		return massUsage(err)
	}
	pushed := 0
	if class := c.String("class"); class != "" {
		uid := c.String("unique-id")
		if err := b.Push(c.Context, massqueue.Job{Class: class, Args: []byte(c.String("args")), UniqueID: uid}); err != nil {
			if errors.Is(err, massqueue.ErrDuplicate) {
				return pushError{fmt.Sprintf("mass batch push: unique id %q is already queued or running: nothing pushed to %s", uid, id), err}
			}
			return massUsage(err)
		}
		pushed = 1
	} else {
		if c.String("args") != "" || c.String("unique-id") != "" {
			return usagef("mass batch push: --args and --unique-id need --class (JSON lines carry their own \"unique\")")
		}
		if pushed, err = pushLines(c, b); err != nil {
			return err
		}
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"id": id, "pushed": pushed})
	}
	fmt.Fprintf(c.App.Writer, "pushed %d to %s\n", pushed, id)
	return nil
}

// pushError is a failed push said in one line of our own, still matching
// its cause (errors.Is: a duplicate exits with code 3).
type pushError struct {
	msg string
	err error
}

func (e pushError) Error() string { return e.msg }
func (e pushError) Unwrap() error { return e.err }

// pushLines pushes the JSON lines of stdin, 500 at a time, with progress
// on a terminal. It stops at the first line it cannot push (not a job, a
// deferrable unique job, a duplicate uid): every line before that one is
// in the batch, it and the lines after it are not, and the error says so.
// Stopping keeps that rule simple for a producer that resumes after the
// line, and matches the Go API (a refused job ends the push).
func pushLines(c *ucli.Context, b *massio.Batch) (int, error) {
	in := c.App.Reader
	if in == nil {
		in = os.Stdin
	}
	progress := terminal(c.App.ErrWriter)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	var jobs []massqueue.Job
	var lines []int // the stdin line of each job in jobs
	pushed, line := 0, 0
	flush := func() error {
		if len(jobs) == 0 {
			return nil
		}
		err := b.Push(c.Context, jobs...)
		var de *massqueue.DuplicateError
		if errors.As(err, &de) {
			pushed += de.Index
			return pushError{fmt.Sprintf("mass batch push: stdin line %d: unique id %q is already queued or running: refused; "+
				"the lines before it (%s) are in batch %s, it and the lines after it were not pushed", lines[de.Index], de.UID, jobCount(pushed), b.ID()), err}
		}
		if err != nil {
			return massUsage(fmt.Errorf("stdin lines %d-%d (%s pushed before them): %w", lines[0], lines[len(lines)-1], plural(pushed, "job", "jobs"), err))
		}
		pushed += len(jobs)
		jobs, lines = jobs[:0], lines[:0]
		if progress {
			fmt.Fprintf(c.App.ErrWriter, "\rpushed %d", pushed)
		}
		return nil
	}
	// bad reports a line that is not a job, once the lines before it are
	// pushed.
	bad := func(format string, args ...any) error {
		if err := flush(); err != nil {
			return err
		}
		return usagef("mass batch push: stdin line %d: %s; the lines before it (%s) are in batch %s, it and the lines after it were not pushed",
			line, fmt.Sprintf(format, args...), jobCount(pushed), b.ID())
	}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var l batchLine
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			return pushed, bad("not a JSON object: %v", err)
		}
		if l.Class == "" {
			return pushed, bad("no \"class\"")
		}
		j := l.job()
		if j.UniqueID != "" && j.Deferrable {
			return pushed, bad("unique.deferrableBy is not supported in a batch (a released job would run outside its batch)")
		}
		jobs, lines = append(jobs, j), append(lines, line)
		if len(jobs) == 500 {
			if err := flush(); err != nil {
				return pushed, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		if ferr := flush(); ferr != nil {
			return pushed, ferr
		}
		return pushed, fmt.Errorf("reading stdin after line %d (%s pushed to %s): %w", line, plural(pushed, "job", "jobs"), b.ID(), err)
	}
	if err := flush(); err != nil {
		return pushed, err
	}
	if progress && pushed > 0 {
		fmt.Fprintln(c.App.ErrWriter)
	}
	if pushed == 0 {
		return 0, usagef("mass batch push: no job (give --class, or JSON lines on stdin)")
	}
	return pushed, nil
}

// jobCount is "1 job" or "n jobs".
func jobCount(n int) string {
	if n == 1 {
		return "1 job"
	}
	return fmt.Sprintf("%d jobs", n)
}

func massBatchCommit(c *ucli.Context) error {
	id, err := oneArg(c, "batch ID")
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	if err := massio.CommitBatch(c.Context, client, id); err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]string{"id": id, "result": "committed"})
	}
	fmt.Fprintf(c.App.Writer, "committed %s\n", id)
	return nil
}

func massStatus(c *ucli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	cfg, client, err := massConfigClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	now, err := client.Time(c.Context)
	if err != nil {
		return err
	}
	st, err := massio.GetStatus(c.Context, client, cfg, now, c.Duration("dead-after"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		for _, p := range st.Batch {
			for i := range p.Units {
				p.Units[i].LastBeat = p.Units[i].LastBeat.UTC().Truncate(time.Second)
			}
		}
		return writeJSON(c.App.Writer, st)
	}
	return printMassStatus(c.App.Writer, st, now)
}

func printMassStatus(w io.Writer, st massqueue.Status, now time.Time) error {
	fmt.Fprintf(w, "unassigned static jobs: %d\ncommitted batches waiting: %d\nallocation failures: %d\n", st.Unassigned, st.Committed, st.Failures)
	if len(st.Paused) > 0 {
		fmt.Fprintf(w, "paused sources: %s\n", strings.Join(st.Paused, " "))
	}
	for _, p := range st.Static {
		fmt.Fprintf(w, "\nstatic pool %s: %d waiting, %s on the ring", p.Pool, p.Waiting, plural(p.Ring, "source", "sources"))
		if len(p.Parked) > 0 {
			fmt.Fprintf(w, ", at their limit: %s", strings.Join(p.Parked, " "))
		}
		fmt.Fprintln(w)
		for _, s := range p.Sources {
			fmt.Fprintf(w, "  %-24s %d\n", s.Source, s.Waiting)
		}
	}
	for _, p := range st.Batch {
		fmt.Fprintf(w, "\nbatch pool %s\n", p.Pool)
		for _, u := range p.Units {
			state := "dead"
			if u.Alive {
				state = "alive"
			}
			beat := "never"
			if !u.LastBeat.IsZero() {
				beat = stats.FormatAgo(now, u.LastBeat)
			}
			fmt.Fprintf(w, "  unit %s: %s (beat %s), %s\n", u.Unit, state, beat, plural(len(u.Batches), "batch", "batches"))
			for _, b := range u.Batches {
				fmt.Fprintf(w, "    %s  %d left\n", b.ID, b.Remaining)
			}
		}
		for _, s := range p.Sources {
			fmt.Fprintf(w, "  source %s: active %s on %s", s.Source, dash(s.Active), dash(s.Unit))
			if s.Parked {
				fmt.Fprintf(w, " (parked: paused, %d left)", s.Remaining)
			} else if s.Paused {
				fmt.Fprint(w, " (paused)")
			}
			fmt.Fprintf(w, ", backlog %d", len(s.Backlog))
			if len(s.Backlog) > 0 {
				fmt.Fprintf(w, " (%s)", strings.Join(s.Backlog, " "))
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

func massFailures(c *ucli.Context) error {
	client, err := noArgsClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	fs, err := massio.Failures(c.Context, client)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		type row struct {
			massqueue.Failure
			At    *string         `json:"at"`
			Entry json.RawMessage `json:"entry"`
		}
		rows := make([]row, 0, len(fs))
		for _, f := range fs {
			e, _ := json.Marshal(string(f.Entry))
			if f.Kind == massqueue.KindStatic && json.Valid(f.Entry) {
				e = f.Entry
			}
			rows = append(rows, row{f, jsonTime(f.At), e})
		}
		return writeJSON(c.App.Writer, listOf(rows))
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tID\tSOURCE\tJOB\tAT\tREASON")
	for _, f := range fs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Kind, dash(f.ID), dash(f.Source), dash(f.Job), humanTime(f.At), dash(f.Reason))
	}
	return tw.Flush()
}

func massReallocate(c *ucli.Context) error {
	all := c.Bool("all")
	if all && c.NArg() > 0 || !all && c.NArg() != 1 {
		return usagef("mass reallocate takes one ID or --all")
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	var n int
	if all {
		n, err = massio.ReallocateAll(c.Context, client)
	} else {
		n, err = massio.Reallocate(c.Context, client, c.Args().First())
	}
	if err != nil {
		return err
	}
	if !all && n == 0 {
		return usagef("no allocation failure %q (see mass failures)", c.Args().First())
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]int{"reallocated": n})
	}
	fmt.Fprintf(c.App.Writer, "reallocated %d\n", n)
	return nil
}

func massSetting(c *ucli.Context, set func() error, what string) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if err := massUsage(set()); err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]string{"source": c.String("source"), "result": what})
	}
	fmt.Fprintf(c.App.Writer, "%s: %s\n", c.String("source"), what)
	return nil
}

func massWeight(c *ucli.Context) error {
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	w := c.Int("weight")
	return massSetting(c, func() error { return massio.SetWeight(c.Context, client, c.String("source"), w) }, "weight "+strconv.Itoa(w))
}

func massLimit(c *ucli.Context) error {
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	n := c.Int("concurrency")
	what := "limit " + strconv.Itoa(n)
	if n <= 0 {
		what = "no limit"
	}
	return massSetting(c, func() error { return massio.SetLimit(c.Context, client, c.String("source"), n) }, what)
}

func massPause(c *ucli.Context) error {
	client, err := noArgsClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	r, err := massio.PauseSource(c.Context, client, c.String("source"))
	if err := massUsage(err); err != nil {
		return err
	}
	what := "paused"
	if r.Already {
		what = "already paused"
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, struct {
			massqueue.PauseResult
			Result string `json:"result"`
		}{r, what})
	}
	if r.Already {
		what += " (no change)"
	}
	fmt.Fprintf(c.App.Writer, "%s: %s\n", r.Source, what)
	for _, b := range r.Batches {
		when := "parked"
		if !b.New {
			when = "parked before"
		}
		fmt.Fprintf(c.App.Writer, "  batch %s in pool %s: %s, off unit %s\n", b.ID, b.Pool, when, b.Unit)
	}
	return nil
}

func massResume(c *ucli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	cfg, client, err := massConfigClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	opt := massqueue.ResumeOptions{DeadAfter: c.Duration("dead-after")}
	if cfg != nil {
		for _, p := range cfg.StaticPools {
			opt.StaticPools = append(opt.StaticPools, p.Name)
		}
	}
	r, err := massio.ResumeSource(c.Context, client, c.String("source"), opt)
	if err := massUsage(err); err != nil {
		return err
	}
	what := "resumed"
	if !r.WasPaused {
		what = "not paused"
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, struct {
			massqueue.ResumeResult
			Result string `json:"result"`
		}{r, what})
	}
	if !r.WasPaused {
		what += " (no change)"
	}
	fmt.Fprintf(c.App.Writer, "%s: %s\n", r.Source, what)
	for _, b := range r.Batches {
		var where string
		switch b.Result {
		case "unit":
			where = "back on unit " + b.Unit
		case "committed":
			where = "unit " + dash(b.Unit) + " is dead or gone: handed back to committed for a live unit"
		default:
			where = "done while paused: finished"
		}
		fmt.Fprintf(c.App.Writer, "  batch %s in pool %s: %s\n", b.ID, b.Pool, where)
	}
	return nil
}

func massSettings(c *ucli.Context) error {
	client, err := noArgsClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	ss, err := massio.Settings(c.Context, client)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, listOf(ss))
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tWEIGHT\tLIMIT\tPAUSED")
	for _, s := range ss {
		lim := "-"
		if s.Limit > 0 {
			lim = strconv.Itoa(s.Limit)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%v\n", s.Source, s.Weight, lim, s.Paused)
	}
	return tw.Flush()
}
