package cli

import (
	"bufio"
	"context"
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
	"github.com/resque-go/resque-go/internal/protocol"
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
					&ucli.Int64Flag{Name: "deferrable-by", Usage: "with --unique-id: when the uid's job is running, park this job and route it `SECONDS` (at most 3153600000, 100 years) after that job succeeds (exit 0, \"deferred\" on stderr)"}),
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

func oneArg(c *ucli.Context, what string) (string, error) {
	if c.NArg() != 1 || c.Args().First() == "" {
		return "", usagef("%s takes one %s", c.Command.FullName(), what)
	}
	return c.Args().First(), nil
}

// batchIDArg is oneArg for the commands that take a batch ID.
func batchIDArg(c *ucli.Context) error {
	_, err := oneArg(c, "batch ID")
	return err
}

// massCall is what a mass command runs with: its flags and arguments, the
// client of its Redis flags, and the mass config of its --config (nil
// when it has none).
type massCall struct {
	*ucli.Context
	client *rdb.Client
	cfg    *massqueue.Config
}

func (m massCall) ctx() context.Context { return m.Context.Context }

// massReply is what a mass command prints: json with --json, else text.
type massReply struct {
	json any
	text func(w io.Writer) error
}

// massAction is the skeleton every mass command shares: check the
// arguments (args; nil: none taken), read --config, open the client
// (closed after), run, and print run's reply.
func massAction(c *ucli.Context, args func(*ucli.Context) error, run func(m massCall) (massReply, error)) error {
	if args == nil {
		args = noArgs
	}
	if err := args(c); err != nil {
		return err
	}
	cfg, err := massConfig(c)
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	r, err := run(massCall{Context: c, client: client, cfg: cfg})
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, r.json)
	}
	return r.text(c.App.Writer)
}

// textf is text of one fmt.Fprintf.
func textf(format string, args ...any) func(io.Writer) error {
	return func(w io.Writer) error {
		fmt.Fprintf(w, format, args...)
		return nil
	}
}

// massList is the reply of a listing: rows as a JSON list, or a table of
// header and one line of tab-separated cells per row.
func massList[T any](rows []T, header string, line func(T) string) massReply {
	return massReply{json: listOf(rows), text: func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, header)
		for _, r := range rows {
			fmt.Fprintln(tw, line(r))
		}
		return tw.Flush()
	}}
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
	if errors.Is(err, protocol.ErrOutOfRange) {
		return usageError{err}
	}
	msg := err.Error()
	for _, s := range []string{"bad source id", "must not be empty", "is empty", "contains ':'", "weight", "not valid JSON", "is not <sourceId>"} {
		if strings.Contains(msg, s) {
			return usageError{err}
		}
	}
	return err
}

// massRoute has no --json: it prints its text.
func massRoute(c *ucli.Context) error {
	return massAction(c, func(c *ucli.Context) error {
		if err := noArgs(c); err != nil {
			return err
		}
		if c.Bool("remove") == (c.String("pool") != "") {
			return usagef("mass route needs --pool P or --remove (not both)")
		}
		return nil
	}, func(m massCall) (massReply, error) {
		pool := m.String("pool")
		if err := massUsage(massio.SetRoute(m.ctx(), m.client, m.String("source"), m.String("name"), pool)); err != nil {
			return massReply{}, err
		}
		key := "src:" + m.String("source") + ":cfg:" + m.String("name")
		if pool == "" {
			return massReply{text: textf("removed %s\n", key)}, nil
		}
		return massReply{text: textf("%s = %s\n", key, pool)}, nil
	})
}

func massRoutes(c *ucli.Context) error {
	return massAction(c, nil, func(m massCall) (massReply, error) {
		rs, err := massio.Routes(m.ctx(), m.client, m.cfg)
		if rs == nil {
			rs = []massqueue.Route{}
		}
		return massList(rs, "KIND\tSOURCE\tJOB\tPOOL\tFROM\tPROBLEM", func(r massqueue.Route) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", dash(string(r.Kind)), r.Source, r.Job, r.Pool, r.From, dash(r.Problem))
		}), err
	})
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func massEnqueue(c *ucli.Context) error {
	return massAction(c, nil, func(m massCall) (massReply, error) {
		j := massqueue.Job{Class: m.String("class"), Source: m.String("source"),
			Name: m.String("name"), Args: []byte(m.String("args")), UniqueID: m.String("unique-id")}
		if m.IsSet("deferrable-by") {
			if j.UniqueID == "" {
				return massReply{}, usageError{errors.New("--deferrable-by needs --unique-id")}
			}
			if j.DeferrableBy = m.Int64("deferrable-by"); j.DeferrableBy < 0 || j.DeferrableBy > protocol.MaxDelaySeconds {
				return massReply{}, usagef("--deferrable-by %d: want whole seconds from 0 to %d (100 years)", j.DeferrableBy, protocol.MaxDelaySeconds)
			}
			j.Deferrable = true
		}
		e, err := massio.EnqueueStaticJob(m.ctx(), m.client, j)
		if err != nil {
			return massReply{}, massUsage(err)
		}
		if e.Deferred {
			fmt.Fprintf(m.App.ErrWriter, "deferred: the job with unique id %q is running; this one is routed %ds after it succeeds\n", j.UniqueID, j.DeferrableBy)
		}
		return massReply{json: map[string]any{"id": e.ID, "source": m.String("source"), "name": m.String("name"), "deferred": e.Deferred},
			text: textf("%s\n", e.ID)}, nil
	})
}

func massBatchCreate(c *ucli.Context) error {
	return massAction(c, nil, func(m massCall) (massReply, error) {
		id, err := massio.CreateBatch(m.ctx(), m.client, m.String("source"), m.String("name"), m.Duration("ttl"))
		if err != nil {
			return massReply{}, massUsage(err)
		}
		return massReply{json: map[string]string{"id": id}, text: textf("%s\n", id)}, nil
	})
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
	return massAction(c, batchIDArg, func(m massCall) (massReply, error) {
		id := m.Args().First()
		b, err := massio.OpenBatch(m.client, id, m.Duration("ttl"))
		if err != nil {
			return massReply{}, massUsage(err)
		}
		pushed := 0
		if class := m.String("class"); class != "" {
			uid := m.String("unique-id")
			if err := b.Push(m.ctx(), massqueue.Job{Class: class, Args: []byte(m.String("args")), UniqueID: uid}); err != nil {
				if errors.Is(err, massqueue.ErrDuplicate) {
					return massReply{}, pushError{fmt.Sprintf("mass batch push: unique id %q is already queued or running: nothing pushed to %s", uid, id), err}
				}
				return massReply{}, massUsage(err)
			}
			pushed = 1
		} else {
			if m.String("args") != "" || m.String("unique-id") != "" {
				return massReply{}, usagef("mass batch push: --args and --unique-id need --class (JSON lines carry their own \"unique\")")
			}
			if pushed, err = pushLines(m.Context, b); err != nil {
				return massReply{}, err
			}
		}
		return massReply{json: map[string]any{"id": id, "pushed": pushed}, text: textf("pushed %d to %s\n", pushed, id)}, nil
	})
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
	return massAction(c, batchIDArg, func(m massCall) (massReply, error) {
		id := m.Args().First()
		if err := massio.CommitBatch(m.ctx(), m.client, id); err != nil {
			return massReply{}, err
		}
		return massReply{json: map[string]string{"id": id, "result": "committed"}, text: textf("committed %s\n", id)}, nil
	})
}

func massStatus(c *ucli.Context) error {
	return massAction(c, nil, func(m massCall) (massReply, error) {
		now, err := m.client.Time(m.ctx())
		if err != nil {
			return massReply{}, err
		}
		st, err := massio.GetStatus(m.ctx(), m.client, m.cfg, now, m.Duration("dead-after"))
		if err != nil {
			return massReply{}, err
		}
		if m.Bool("json") {
			for _, p := range st.Batch {
				for i := range p.Units {
					p.Units[i].LastBeat = p.Units[i].LastBeat.UTC().Truncate(time.Second)
				}
			}
		}
		return massReply{json: st, text: func(w io.Writer) error { return printMassStatus(w, st, now) }}, nil
	})
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

// failureRow is an allocation failure as mass failures --json prints it.
type failureRow struct {
	massqueue.Failure
	At    *string         `json:"at"`
	Entry json.RawMessage `json:"entry"`
}

func massFailures(c *ucli.Context) error {
	return massAction(c, nil, func(m massCall) (massReply, error) {
		fs, err := massio.Failures(m.ctx(), m.client)
		r := massList(fs, "KIND\tID\tSOURCE\tJOB\tAT\tREASON", func(f massqueue.Failure) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", f.Kind, dash(f.ID), dash(f.Source), dash(f.Job), humanTime(f.At), dash(f.Reason))
		})
		rows := make([]failureRow, 0, len(fs))
		for _, f := range fs {
			e, _ := json.Marshal(string(f.Entry))
			if f.Kind == massqueue.KindStatic && json.Valid(f.Entry) {
				e = f.Entry
			}
			rows = append(rows, failureRow{f, jsonTime(f.At), e})
		}
		r.json = listOf(rows)
		return r, err
	})
}

func massReallocate(c *ucli.Context) error {
	return massAction(c, func(c *ucli.Context) error {
		if all := c.Bool("all"); all && c.NArg() > 0 || !all && c.NArg() != 1 {
			return usagef("mass reallocate takes one ID or --all")
		}
		return nil
	}, func(m massCall) (massReply, error) {
		var n int
		var err error
		if m.Bool("all") {
			n, err = massio.ReallocateAll(m.ctx(), m.client)
		} else {
			n, err = massio.Reallocate(m.ctx(), m.client, m.Args().First())
		}
		if err != nil {
			return massReply{}, err
		}
		if !m.Bool("all") && n == 0 {
			return massReply{}, usagef("no allocation failure %q (see mass failures)", m.Args().First())
		}
		return massReply{json: map[string]int{"reallocated": n}, text: textf("reallocated %d\n", n)}, nil
	})
}

// massSetting is the reply of a change to a source's settings.
func massSetting(m massCall, err error, what string) (massReply, error) {
	if err := massUsage(err); err != nil {
		return massReply{}, err
	}
	return massReply{json: map[string]string{"source": m.String("source"), "result": what}, text: textf("%s: %s\n", m.String("source"), what)}, nil
}

func massWeight(c *ucli.Context) error {
	return massAction(c, nil, func(m massCall) (massReply, error) {
		w := m.Int("weight")
		return massSetting(m, massio.SetWeight(m.ctx(), m.client, m.String("source"), w), "weight "+strconv.Itoa(w))
	})
}

func massLimit(c *ucli.Context) error {
	return massAction(c, nil, func(m massCall) (massReply, error) {
		n := m.Int("concurrency")
		what := "limit " + strconv.Itoa(n)
		if n <= 0 {
			what = "no limit"
		}
		return massSetting(m, massio.SetLimit(m.ctx(), m.client, m.String("source"), n), what)
	})
}

func massPause(c *ucli.Context) error {
	return massAction(c, nil, func(m massCall) (massReply, error) {
		r, err := massio.PauseSource(m.ctx(), m.client, m.String("source"))
		if err := massUsage(err); err != nil {
			return massReply{}, err
		}
		what := "paused"
		if r.Already {
			what = "already paused"
		}
		return massReply{json: struct {
			massqueue.PauseResult
			Result string `json:"result"`
		}{r, what}, text: func(w io.Writer) error {
			if r.Already {
				what += " (no change)"
			}
			fmt.Fprintf(w, "%s: %s\n", r.Source, what)
			for _, b := range r.Batches {
				when := "parked"
				if !b.New {
					when = "parked before"
				}
				fmt.Fprintf(w, "  batch %s in pool %s: %s, off unit %s\n", b.ID, b.Pool, when, b.Unit)
			}
			return nil
		}}, nil
	})
}

func massResume(c *ucli.Context) error {
	return massAction(c, nil, func(m massCall) (massReply, error) {
		opt := massqueue.ResumeOptions{DeadAfter: m.Duration("dead-after")}
		if m.cfg != nil {
			for _, p := range m.cfg.StaticPools {
				opt.StaticPools = append(opt.StaticPools, p.Name)
			}
		}
		r, err := massio.ResumeSource(m.ctx(), m.client, m.String("source"), opt)
		if err := massUsage(err); err != nil {
			return massReply{}, err
		}
		what := "resumed"
		if !r.WasPaused {
			what = "not paused"
		}
		return massReply{json: struct {
			massqueue.ResumeResult
			Result string `json:"result"`
		}{r, what}, text: func(w io.Writer) error {
			if !r.WasPaused {
				what += " (no change)"
			}
			fmt.Fprintf(w, "%s: %s\n", r.Source, what)
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
				fmt.Fprintf(w, "  batch %s in pool %s: %s\n", b.ID, b.Pool, where)
			}
			return nil
		}}, nil
	})
}

func massSettings(c *ucli.Context) error {
	return massAction(c, nil, func(m massCall) (massReply, error) {
		ss, err := massio.Settings(m.ctx(), m.client)
		return massList(ss, "SOURCE\tWEIGHT\tLIMIT\tPAUSED", func(s massqueue.SourceSetting) string {
			lim := "-"
			if s.Limit > 0 {
				lim = strconv.Itoa(s.Limit)
			}
			return fmt.Sprintf("%s\t%d\t%s\t%v", s.Source, s.Weight, lim, s.Paused)
		}), err
	})
}
